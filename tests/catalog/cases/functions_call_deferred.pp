# Puppet's call() of a Deferred resolves it now: nested Deferred
# arguments first, a '$name' as dig into that variable.
$h = { 'a' => [1, 2] }
$v = [
  call(Deferred('upcase', ['a'])),
  call(Deferred('$h', ['a', 1])),
  call(Deferred('$h')),
  call(Deferred('sprintf', ['%s-%s', Deferred('downcase', ['B']), 'c'])),
]
notify { 'deferred': message => "${v}" }
