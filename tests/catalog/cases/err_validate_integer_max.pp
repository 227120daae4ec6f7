# validate_integer over its maximum.
validate_integer('12', 10)
