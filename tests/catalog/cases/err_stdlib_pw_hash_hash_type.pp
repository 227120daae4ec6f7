# The hash type must be a string.
$h = pw_hash('password', 6, 'abc')
