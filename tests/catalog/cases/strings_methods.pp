$s = 'Hello World'
notify { 'smeth': message => [
  $s.upcase, $s.downcase, $s.size, $s.split(' '), "${s.length} chars", $s[0, 5], $s[-5, 5],
  'a-b-c'.regsubst('-', '+', 'G'), 'abc' =~ /B/, 'ABC' == 'abc', 'x' * 1 == 'x',
] }
