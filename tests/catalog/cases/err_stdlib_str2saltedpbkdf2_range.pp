# The iteration count must be strictly between 40,000 and 70,000.
$h = str2saltedpbkdf2('password', 'saltsalt', 40000)
