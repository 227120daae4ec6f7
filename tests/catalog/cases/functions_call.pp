# Puppet's call(): a function by name, with the remaining arguments and
# the block; a namespaced Puppet-language function too.
function call_fn::twice($x) { $x * 2 }
$v = [
  call('type3x', 'a'),
  call('upcase', 'b'),
  call('map', [1, 2]) |$x| { $x + 1 },
  call('call_fn::twice', 4),
  call('::size', [1, 2, 3]),
]
notify { 'call': message => "${v}" }
