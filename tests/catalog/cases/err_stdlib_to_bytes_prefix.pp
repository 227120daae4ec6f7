# to_bytes knows k, M, G, T, P and E only.
notify { 'x': message => String(to_bytes('3 x')) }
