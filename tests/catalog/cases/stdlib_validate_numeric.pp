# stdlib's validate_numeric: numbers, numeric strings (Ruby's Float()), arrays, bounds.
validate_numeric(1)
validate_numeric(1.5, 2)
validate_numeric('0x1A', 26)
validate_numeric(' 12 ', 12, 12)
validate_numeric([1, '2.5', 3e0, '1_0'], 10, 1)
validate_numeric(-5, '', -10)
validate_numeric(5, undef, 1)
validate_numeric('1e3', '1e3')
validate_numeric('.5', 1, '-0x10')
validate_numeric([], 1, 0)
notify { 'validate_numeric': message => 'all passed' }
