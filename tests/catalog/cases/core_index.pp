# index: of a value in an array or hash (its key), of a substring or regexp
# in a string, and of the first element a lambda of one or two parameters
# accepts; undef when there is none.
$h = { 'a' => 1, 'b' => 2, 'c' => 2 }
$r = [
  index([1, 2, 3, 2], 2),
  index(['a', 'b'], 'B'),
  index($h, 2),
  index($h, 9),
  index('hello world', 'o'),
  index('hello world', /w.r/),
  index('hello', 'z'),
  index([5, 6, 7]) |$x| { $x > 5 },
  index([5, 6, 7]) |$i, $x| { $i == 2 },
  index($h) |$v| { $v == 2 },
  index($h) |$k, $v| { $k == 'c' },
  index([1, 2]) |$x| { $x > 5 },
  index('abc', 'c'),
  index('abc') |$c| { $c == 'b' },
  index(3, 2),
  ['x', 'y'].index('y'),
]
notify { 'index': message => String($r) }
