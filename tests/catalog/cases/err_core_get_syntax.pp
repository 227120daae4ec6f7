# get with an unterminated quote in the navigation string.
notice(get({ 'a' => 1 }, 'a."b'))
