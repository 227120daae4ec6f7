# import() called as a function, with any arguments.
notify { 'x': message => import() }
