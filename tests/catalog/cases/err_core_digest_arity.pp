# digest() takes exactly one argument.
notify { 'x': message => digest() }
