# A notify resource always changes, so it refreshes what it notifies on
# every run: notify ~> refreshonly exec ~> refreshonly exec. Each exec
# appends to a log, which grows on every apply.
$root = '/tmp/ferry-puppet-case'

notify { 'kick':
  message => 'kicking the chain',
}

exec { 'first':
  command     => "/bin/sh -c 'echo first >> ${root}/chain.log'",
  refreshonly => true,
  subscribe   => Notify['kick'],
}

exec { 'second':
  command     => "/bin/sh -c 'echo second >> ${root}/chain.log'",
  refreshonly => true,
}

Exec['first'] ~> Exec['second']
