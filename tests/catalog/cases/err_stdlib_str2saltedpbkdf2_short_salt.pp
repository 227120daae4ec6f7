# The salt must be at least 8 bytes long.
$h = str2saltedpbkdf2('password', 'abcdefg', 50000)
