# swapcase() takes a string or an array.
notify { 'x': message => swapcase(3) }
