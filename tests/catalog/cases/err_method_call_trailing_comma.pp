$opts = { 'a' => 1 }.merge(b => 2,)
notify { 'x': message => $opts }
