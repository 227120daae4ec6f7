# An unknown hash type is named as given.
$h = pw_hash('password', 'SHA-1', 'abc')
