# unix2dos() takes a string.
notify { 'x': message => unix2dos(['a']) }
