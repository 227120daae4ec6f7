# validate_numeric with an undef minimum.
validate_numeric(1, 10, undef)
