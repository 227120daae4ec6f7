# validate_string of a number.
validate_string('ok', 3)
