# validate_numeric with a non-numeric array element.
validate_numeric([1, '2', true])
