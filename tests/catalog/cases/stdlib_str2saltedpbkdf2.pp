# stdlib's str2saltedpbkdf2: PBKDF2-HMAC-SHA512 (128 bytes) as hex, with
# the salt as hex and the iteration count.
$plain = str2saltedpbkdf2('Pa55w0rd', 'Use a s@lt h3r3 th@t is 32 byt3s', 50000)
notify { 'plain': message => String($plain) }
$edges = [
  str2saltedpbkdf2('', 'saltsalt', 40001),
  str2saltedpbkdf2(undef, 'sältsält', 69999),
  str2saltedpbkdf2('pässwörd ☃', '12345678', 45678),
  # Five characters, ten bytes: long enough.
  str2saltedpbkdf2('password', 'äöüäö', 50000),
]
notify { 'edges': message => String($edges) }
# Sensitive arguments are unwrapped; the result is a plain Hash.
$sensitive = str2saltedpbkdf2(Sensitive('Pa55w0rd'), Sensitive('Use a s@lt h3r3 th@t is 32 byt3s'), 50000)
$same = $sensitive['password_hex'] == $plain['password_hex']
notify { 'sensitive': message => String([$sensitive =~ Sensitive, $sensitive =~ Hash, $same, $sensitive['iterations']]) }
