# The iteration count must be an Integer.
$h = str2saltedpbkdf2('password', 'saltsalt', 50000.0)
