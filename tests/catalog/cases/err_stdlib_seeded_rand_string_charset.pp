# seeded_rand_string's charset has at least two characters.
notify { 'x': message => seeded_rand_string(4, 'seed', 'a') }
