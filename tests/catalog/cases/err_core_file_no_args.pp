# file() needs at least one argument.
notify { 'x': message => file() }
