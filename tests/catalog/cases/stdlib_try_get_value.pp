# stdlib's deprecated try_get_value: a path string walked as dig44 walks it.
$data = { 'a' => { 'b' => ['b1', 'b2', 'b3'], 'c' => undef }, 'x:y' => 1 }
$results = [
  try_get_value($data, 'a/b/2'),
  try_get_value($data, 'a/b/7', 'none'),
  try_get_value($data, 'a/c', 'default for undef'),
  try_get_value($data, 'a:b:0', 'd', ':'),
  try_get_value($data, 'a/b/'),
  try_get_value($data, '', 'empty path'),
  try_get_value('scalar', 'a', 'default'),
  try_get_value(['p', 'q'], '1'),
  try_get_value({ 'only' => 'data' }),
]
notify { 'try_get_value': message => String($results) }
