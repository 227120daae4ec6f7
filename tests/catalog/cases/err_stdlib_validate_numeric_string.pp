# validate_numeric of a string Ruby's Float() refuses.
validate_numeric('5.')
