# validate_slength reports the array's length, as stdlib does.
validate_slength(['ab', 'abcdef'], 4, 2)
