# str2saltedpbkdf2 takes exactly three arguments (its own check).
$h = str2saltedpbkdf2('password', 'saltsalt')
