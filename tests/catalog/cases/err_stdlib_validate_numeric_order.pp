# validate_numeric with a maximum below its minimum.
validate_numeric(5, 1, 10)
