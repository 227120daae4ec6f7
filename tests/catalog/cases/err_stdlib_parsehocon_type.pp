# parsehocon takes a String.
notify { 'x': message => String(parsehocon(['a = 1'])) }
