# validate_numeric without arguments.
validate_numeric()
