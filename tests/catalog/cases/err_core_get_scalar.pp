# get navigating into a string.
notice(get({ 'a' => 'text' }, 'a.b'))
