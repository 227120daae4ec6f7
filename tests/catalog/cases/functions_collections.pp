$h = { 'a' => 1, 'b' => 2 }
notify { 'coll': message => [
  keys($h), values($h), merge($h, { 'c' => 3, 'a' => 0 }), flatten([1, [2, [3]]]),
  unique([1, 1, 2, 'a', 'a']), sort(['b', 'c', 'a']), concat([1], [2, 3], 4),
  empty([]), empty(''), has_key($h, 'a'), member(['x', 'y'], 'y'), pick(undef, '', 'first'),
  delete(['a', 'b', 'a'], 'a'), range(1, 4), [1, 2, 3][-1], [1, 2, 3, 4][1, 2], $h['missing'],
  length('four'), min(3, 1, 2), max(3, 1, 2), abs(-4), dig({ 'a' => { 'b' => [10, 20] } }, 'a', 'b', 1),
] }
