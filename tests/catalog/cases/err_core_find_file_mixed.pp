# find_file() takes Strings or one Array of Strings, not a mix.
notify { 'x': message => find_file('a/b', ['c/d']) }
