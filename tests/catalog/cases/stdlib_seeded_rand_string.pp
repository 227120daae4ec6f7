# stdlib's seeded_rand_string: Ruby's Random seeded by a SHA-256 of the
# seed, so the same string as Puppet's (issue 14).
notify { 'default': message => seeded_rand_string(8, 'mymodule::redis_password') }
notify { 'long': message => seeded_rand_string(40, 'another seed') }
notify { 'one': message => seeded_rand_string(1, 'x') }
notify { 'empty-seed': message => seeded_rand_string(5, '') }
notify { 'charset': message => seeded_rand_string(5, '', 'abcdef') }
notify { 'charset-two': message => seeded_rand_string(16, 'bits', '01') }
notify { 'charset-utf8': message => seeded_rand_string(6, 'u', 'äöü€') }
notify { 'same': message => String(seeded_rand_string(12, 's') == seeded_rand_string(12, 's')) }
