notify { 'conv': message => [String(42), Integer('17'), Float('1.5'), Integer(3.9), Array('x'), Boolean('true'), Hash([['a', 1]])] }
