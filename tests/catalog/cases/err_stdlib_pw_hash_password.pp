# The password must be a string (or undef).
$h = pw_hash(42, 'md5', 'abc')
