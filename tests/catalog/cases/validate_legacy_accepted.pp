# validate_legacy with a value its type refuses but the legacy validate_*
# function accepts only warns (stdlib's deprecation path): undef for
# validate_string, a numeric string for validate_integer, a string for
# validate_re.
validate_legacy(String, 'validate_string', undef)
validate_legacy(Integer, 'validate_integer', '5')
validate_legacy(Pattern[/^b/], 'validate_re', 'abc', '^a')
notify { 'validated': }
