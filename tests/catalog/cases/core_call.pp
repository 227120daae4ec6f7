# call: a function by name, with arguments and a block; a Puppet-language
# function of a module; a function name held in a variable.
$f = 'upcase'
$r = [
  call('sprintf', '%s-%d', 'x', 3),
  call($f, 'abc'),
  call('map', [1, 2]) |$x| { $x * 10 },
  call('with', 1, 2) |$a, $b| { $a + $b },
  call('size', [1, 2, 3]),
]
notify { 'call': message => String($r) }
