# validate_numeric under its minimum in an array: the whole array shown.
validate_numeric([7, '2e1', 1], '', 5)
