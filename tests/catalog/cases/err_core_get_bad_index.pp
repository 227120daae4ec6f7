# get with a non-numeric segment into an array and no block.
notice(get({ 'a' => [1, 2] }, 'a.x'))
