$x = 1
next(2)
notify { "after": }
