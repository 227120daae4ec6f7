# sprintf_hash: a reference to a key the hash does not have.
notify { 'x': message => sprintf_hash('%<a>s and %<zz>s', { 'a' => 1 }) }
