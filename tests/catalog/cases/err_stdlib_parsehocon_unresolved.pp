# A substitution that names nothing.
notify { 'x': message => String(parsehocon('a = 1, b = ${c}')) }
