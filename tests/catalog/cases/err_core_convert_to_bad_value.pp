# convert_to of a value the type cannot be made from.
notice(convert_to('abc', Integer))
