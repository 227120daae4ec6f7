# type3x takes exactly one argument.
notify { 'x': message => type3x('a', 'b') }
