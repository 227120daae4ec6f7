# validate_legacy with a value that neither the type nor the legacy
# validate_* function accepts fails with the type mismatch.
validate_legacy(Integer, 'validate_integer', 'abc')
