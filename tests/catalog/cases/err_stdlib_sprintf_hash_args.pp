# sprintf_hash wants a hash of arguments.
notify { 'x': message => sprintf_hash('%<a>s', ['x']) }
