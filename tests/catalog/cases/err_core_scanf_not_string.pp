# scanf() of a number.
notify { 'x': message => scanf(42, '%d') }
