# get with a navigation that is not a String.
notice(get({ 'a' => 1 }, 1))
