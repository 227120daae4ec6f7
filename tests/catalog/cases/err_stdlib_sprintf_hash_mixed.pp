# sprintf_hash: named and unnumbered references mixed.
notify { 'x': message => sprintf_hash('%<a>s %s', { 'a' => 1 }) }
