# sha1() takes exactly one argument.
notify { 'x': message => sha1() }
