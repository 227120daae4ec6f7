# Ruby's crypt refuses a NUL in the password.
$h = pw_hash("pass\u0000word", 'sha-256', 'abc')
