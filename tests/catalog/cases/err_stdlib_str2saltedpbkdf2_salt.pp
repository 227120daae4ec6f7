# The salt must be a string.
$h = str2saltedpbkdf2('password', ['saltsalt'], 50000)
