# The salt must be a string.
$h = pw_hash('password', 'md5', ['abc'])
