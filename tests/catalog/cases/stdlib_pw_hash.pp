# stdlib's pw_hash: crypt(3) as Puppet's Ruby on Linux (libxcrypt) computes
# it, for fixed salts of every hash type.
$md5 = [
  pw_hash('test', 'md5', '1'),
  pw_hash('password', 'MD5', 'abcdefghijkl'),
  pw_hash('pässword', 'md5', 'abc'),
  pw_hash('a', 'md5', 'x./Y09zZ'),
  pw_hash('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'md5', 'abcd'),
]
notify { 'md5': message => String($md5) }
$sha = [
  pw_hash('password', 'sha-256', 'abcdefghijklmnopqrstu'),
  pw_hash('password', 'Sha-512', 'abcdefghijklmnopqrstu'),
  pw_hash('password', 'sha-512', 'a'),
  pw_hash('pässword', 'sha-512', 'abc'),
  pw_hash('ünïcødé ☃', 'sha-256', 'Zz09./'),
  pw_hash('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'sha-256', 'abcd'),
]
notify { 'sha': message => String($sha) }
$bcrypt = [
  pw_hash('password', 'bcrypt', '05$abcdefghijklmnopqrstuv'),
  pw_hash('password', 'bcrypt-a', '04$abcdefghijklmnopqrstuv'),
  pw_hash('password', 'bcrypt-x', '04$abcdefghijklmnopqrstuv'),
  pw_hash('password', 'BCRYPT-Y', '04$abcdefghijklmnopqrstuv'),
  pw_hash('pässword', 'bcrypt-x', '04$abcdefghijklmnopqrstuv'),
  pw_hash('pässword', 'bcrypt-a', '04$abcdefghijklmnopqrstuv'),
  pw_hash('pässword', 'bcrypt', '04$abcdefghijklmnopqrstuv'),
  pw_hash('password', 'bcrypt', '04$abcdefghijklmnopqrstu.'),
  pw_hash('password', 'bcrypt', '04$abcdefghijklmnopqrstuO'),
  pw_hash('password', 'bcrypt', '04$abcdefghijklmnopqrstuvwxyz'),
  pw_hash('password', 'bcrypt', '04$abcdefghijklmnopqrstuv$and~more'),
  pw_hash('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'bcrypt', '04$abcdefghijklmnopqrstuv'),
  pw_hash('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaXYZ', 'bcrypt', '04$abcdefghijklmnopqrstuv'),
]
notify { 'bcrypt': message => String($bcrypt) }
# crypt(3)'s failure token: a cost out of 04..31, a salt libxcrypt refuses.
$refused = [
  pw_hash('password', 'bcrypt', '03$abcdefghijklmnopqrstuv'),
  pw_hash('password', 'bcrypt', '32$abcdefghijklmnopqrstuv'),
  pw_hash('password', 'bcrypt', '04$abcdefghijklmnopqrstuv!'),
  pw_hash('password', 'bcrypt', '04$abcdefghijklmnopqrstuv here'),
  pw_hash('password', 'bcrypt', '04$abcdefghijklmnopqrstuvé'),
  pw_hash('password', 'bcrypt', "no cost\n04\$abcdefghijklmnopqrstuv"),
]
notify { 'refused': message => String($refused) }
# An empty or undef password is undef; Sensitive arguments are unwrapped.
$special = [
  pw_hash('', 'md5', 'abc'),
  pw_hash(undef, 'sha-512', 'abc'),
  pw_hash(Sensitive('secret'), Sensitive('sha-512'), Sensitive('salt')),
]
notify { 'special': message => String($special) }
