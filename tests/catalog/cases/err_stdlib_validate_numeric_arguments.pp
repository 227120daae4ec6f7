# validate_numeric with too many arguments.
validate_numeric(1, 2, 0, 4)
