# The password must be a string.
$h = str2saltedpbkdf2(12345678, 'saltsalt', 50000)
