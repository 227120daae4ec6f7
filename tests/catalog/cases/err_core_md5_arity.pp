# md5() takes exactly one argument.
notify { 'x': message => md5('a', 'b') }
