$parts = split('a,b,,c', ',')
$j = join(['x', 'y', 'z'], '-')
notify { 'strings': message => [
  $parts, $j, size($parts), upcase('abc'), downcase('ABC'), capitalize('hello'),
  strip('  s  '), regsubst('foo-bar', '-', '_'), regsubst('a1b2', '[0-9]', 'N', 'G'),
  sprintf('%s is %d years, %05.2f', 'bob', 42, 3.14159), versioncmp('1.10', '1.9'),
  versioncmp('2.0', '2.0'), 'abc'[1], 'abcdef'[1, 3], chomp("line\n"),
] }
