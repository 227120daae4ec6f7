# seeded_rand's maximum must be positive.
notify { 'x': message => String(seeded_rand(0, 'x')) }
