# stdlib's str2bool wants a string or a boolean.
notify { 'x': message => String(str2bool(1)) }
