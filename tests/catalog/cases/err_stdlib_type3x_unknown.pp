# type3x refuses what is not a 3.x string, number, boolean, array or hash.
notify { 'x': message => type3x(Integer) }
