# stdlib's convert_base takes bases 2 to 36.
notice(convert_base(5, 37))
