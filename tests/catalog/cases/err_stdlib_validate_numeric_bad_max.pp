# validate_numeric with a maximum that is not a number.
validate_numeric(1, 'ten')
