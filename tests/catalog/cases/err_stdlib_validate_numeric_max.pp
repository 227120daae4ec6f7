# validate_numeric over its maximum: the value and bound shown as Floats.
validate_numeric('12.5', 10)
