# seeded_rand's seed must be a string.
notify { 'x': message => String(seeded_rand(10, 3)) }
