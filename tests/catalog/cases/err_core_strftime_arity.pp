# strftime() without arguments.
notify { 'x': message => strftime() }
