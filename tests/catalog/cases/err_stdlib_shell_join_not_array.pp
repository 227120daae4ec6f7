# shell_join() takes an array.
notify { 'x': message => shell_join('a b') }
