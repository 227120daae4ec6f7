# validate_slength's maximum must be a positive integer.
validate_slength('abc', 0)
