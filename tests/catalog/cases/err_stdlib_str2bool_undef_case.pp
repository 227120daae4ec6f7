# stdlib's str2bool: 'undef' is known in lower case only.
notify { 'x': message => String(str2bool('UNDEF')) }
