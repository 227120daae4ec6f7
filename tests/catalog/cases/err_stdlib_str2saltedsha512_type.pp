# str2saltedsha512() takes a string.
notify { "x": message => str2saltedsha512(3) }
