# A crypt salt holds only [a-zA-Z0-9./].
$h = pw_hash('password', 'sha-512', 'ab$cd')
