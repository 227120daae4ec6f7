# get: dotted navigation into hashes and arrays, quoted segments with dots,
# numeric indexes, the default for missing values and undef, the empty
# path, and the block that receives the navigation error.
$data = { 'a' => { 'b' => [10, 20, { 'c' => 'deep' }] }, 'x.y' => 'quoted', 'n' => { '1' => 'string key' }, 'u' => undef }
$r = [
  get($data, 'a.b.0'),
  get($data, 'a.b.2.c'),
  get($data, '"x.y"'),
  get($data, "'x.y'"),
  get($data, 'a.missing', 'dflt'),
  get($data, 'u', 'dflt'),
  get(undef, 'a', 'nil-default'),
  get($data, 'a.b.7', 'out'),
  get([1, [2, 3]], '1.0'),
  get($data, 'n.1'),
  get('str', '', 'unused'),
  get($data, 'a.b.x', 'd') |$err| { "${err.issue_code}: ${err.message}" },
  get($data, 'a.b.2.c.d') |$err| { "${err.kind}|${err.issue_code}|${err.message}|${err.details}" },
  get($data, ' a . "b" . 1 '),
  get([1, 2, 3], '-1'),
  $data.get('a.b.1'),
]
notify { 'get': message => String($r) }
