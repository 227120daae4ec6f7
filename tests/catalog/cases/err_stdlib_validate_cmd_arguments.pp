# validate_cmd without a checker.
validate_cmd('x')
