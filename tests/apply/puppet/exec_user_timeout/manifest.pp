# Exec as another user and group, with a umask, and an exec that exceeds
# its timeout (sleep 10, timeout 2), which fails and skips its dependent.
$root = '/tmp/ferry-puppet-case'

file { "${root}/nobody":
  ensure => directory,
  owner  => 'nobody',
  group  => 'nogroup',
  mode   => '0755',
}

exec { 'as-nobody':
  command  => "id -un > ${root}/nobody/whoami; id -gn >> ${root}/nobody/whoami",
  provider => shell,
  user     => 'nobody',
  group    => 'nogroup',
  umask    => '0027',
  creates  => "${root}/nobody/whoami",
  require  => File["${root}/nobody"],
}

exec { 'umask-root':
  command => "/usr/bin/touch ${root}/umask-077",
  umask   => '0077',
  creates => "${root}/umask-077",
}

exec { 'too-slow':
  command => '/bin/sleep 10',
  timeout => 2,
}

file { "${root}/after-timeout":
  ensure  => file,
  content => "must not exist\n",
  require => Exec['too-slow'],
}

exec { 'fast-enough':
  command => "/bin/sh -c 'sleep 1; touch ${root}/fast'",
  timeout => 5,
  creates => "${root}/fast",
}
