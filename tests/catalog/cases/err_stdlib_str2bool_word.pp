# stdlib's str2bool refuses a word it does not know ('on' included).
notify { 'x': message => String(str2bool('on')) }
