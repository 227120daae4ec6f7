# shuffle() takes an array or a string.
notify { "x": message => String(shuffle(3)) }
