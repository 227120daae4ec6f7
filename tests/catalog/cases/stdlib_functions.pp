$h = { 'a' => 1, 'b' => undef }
notify { 'stdlib': message => [
  delete_undef_values($h), pick_default(undef, 'd'), any2array('x'), bool2str(true), str2bool('yes'),
  prefix(['a', 'b'], 'p-'), suffix(['a', 'b'], '.conf'), basename('/a/b/c.txt'), dirname('/a/b/c.txt'),
  deep_merge({ 'a' => { 'x' => 1 } }, { 'a' => { 'y' => 2 } }), to_json({ 'k' => [1, 2] }), zip([1, 2], ['a', 'b']),
  values_at(['a', 'b', 'c'], [0, 2]), ensure_packages(['tree']),
] }
