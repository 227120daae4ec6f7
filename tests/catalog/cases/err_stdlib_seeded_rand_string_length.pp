# seeded_rand_string's length is at least 1.
notify { 'x': message => seeded_rand_string(0, 'seed') }
