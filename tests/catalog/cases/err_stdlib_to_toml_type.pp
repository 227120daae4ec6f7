# to_toml takes a Hash.
notify { 'x': message => to_toml([1, 2]) }
