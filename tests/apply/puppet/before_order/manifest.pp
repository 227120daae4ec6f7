# Resources declared out of dependency order: `before`, `require`, a chain
# arrow, a file declared before its parent directory (autorequire), and an
# exec whose cwd is a directory declared after it (autorequire). Each exec
# appends to order.log once.
$root = '/tmp/ferry-puppet-case'

exec { 'c':
  command => "/bin/sh -c 'echo c >> ${root}/order.log'",
  creates => "${root}/c.done",
  require => Exec['b'],
}

exec { 'c-marker':
  command => "/bin/touch ${root}/c.done",
  creates => "${root}/c.done",
  require => Exec['c'],
}

exec { 'b':
  command => "/bin/sh -c 'echo b >> ${root}/order.log'",
  creates => "${root}/c.done",
}

exec { 'a':
  command => "/bin/sh -c 'echo a >> ${root}/order.log'",
  creates => "${root}/c.done",
  before  => Exec['b'],
}

exec { 'in-dir':
  command => "/bin/sh -c 'pwd > here.txt'",
  cwd     => "${root}/dir/sub",
  creates => "${root}/dir/sub/here.txt",
}

file { "${root}/dir/sub":
  ensure => directory,
}

file { "${root}/dir":
  ensure => directory,
}

file { "${root}/z-first": ensure => file, content => "z\n" }
file { "${root}/y-second": ensure => file, content => "y\n" }

File["${root}/y-second"] -> File["${root}/z-first"]
