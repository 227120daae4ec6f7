# sprintf_hash: %d of a string that is not a number.
notify { 'x': message => sprintf_hash('%<a>d', { 'a' => 'x' }) }
