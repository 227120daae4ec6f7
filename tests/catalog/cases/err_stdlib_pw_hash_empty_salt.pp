# The salt must not be empty (checked before an empty password is undef).
$h = pw_hash('', 'md5', '')
