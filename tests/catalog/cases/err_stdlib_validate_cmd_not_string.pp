# validate_cmd with a checker that is not a string.
validate_cmd('x', ['grep', 'x'])
