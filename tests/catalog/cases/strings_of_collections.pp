# String forms of collections: interpolation leaves strings bare and undef empty, String() quotes.
notify { 'a': message => "${['a', 1, "it's"]} ${String(['b'])} ${{'k' => 'v'}}" }
notify { 'b': message => String([SemVer('1.0.0')]) }
notify { 'c': message => "${[undef, true, 1.5]}" }
