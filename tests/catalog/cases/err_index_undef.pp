$x = undef
notify { 'a': message => $x[0] }
