# stdlib's grep (a regex or a string compiled as one) and dig44 (the
# default when a step is missing or undef; array steps as integers).
$g1 = grep(['aaa', 'bbb', 'ccc', 'aab'], 'aa')
$g2 = grep(['swift-1', 'x', 'swift-22'], /^swift-\d+$/)
$data = { 'a' => { 'b' => [10, 20, { 'c' => 'deep' }] }, 'n' => undef }
$d1 = dig44($data, ['a', 'b', 2, 'c'])
$d2 = dig44($data, ['a', 'b', '1'])
$d3 = dig44($data, ['a', 'missing', 'c'], 'fallback')
$d4 = dig44($data, ['n'], 'was-undef')
$d5 = dig44($data, ['a', 'b', 'x'], 'not-an-index')
notify { 'stdlib': message => "${g1} ${g2} ${d1} ${d2} ${d3} ${d4} ${d5}" }
