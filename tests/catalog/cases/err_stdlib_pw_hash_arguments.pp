# pw_hash takes exactly three arguments (its 3.x arity).
$h = pw_hash('password', 'md5')
