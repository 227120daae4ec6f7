# sprintf_hash: an unknown conversion.
notify { 'x': message => sprintf_hash('%<a>y', { 'a' => 'x' }) }
