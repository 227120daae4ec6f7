# A bcrypt salt is a two-digit cost, $ and 22 salt characters.
$h = pw_hash('password', 'bcrypt-y', '4$abcdefghijklmnopqrstuv')
