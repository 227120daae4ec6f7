# stdlib::start_with tests a string.
notify { 'x': message => String(stdlib::start_with(3, 'a')) }
