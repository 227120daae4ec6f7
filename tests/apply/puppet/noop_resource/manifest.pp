# noop => true on single resources: a file that would be created notifies a
# refreshonly exec ("Would have triggered"), an exec with noop, a directory
# with noop, and an ordinary file beside them that changes and refreshes
# its own exec.
$root = '/tmp/ferry-puppet-case'

file { "${root}/noop-file":
  ensure  => file,
  content => "would be written\n",
  noop    => true,
  notify  => Exec['refresh-from-noop'],
}

exec { 'refresh-from-noop':
  command     => "/bin/touch ${root}/must-not-exist",
  refreshonly => true,
}

exec { 'noop-exec':
  command => "/bin/touch ${root}/must-not-exist-either",
  creates => "${root}/must-not-exist-either",
  noop    => true,
}

file { "${root}/real-file":
  ensure  => file,
  content => "written\n",
  notify  => Exec['refresh-real'],
}

exec { 'refresh-real':
  command     => "/bin/sh -c 'echo refreshed >> ${root}/refresh.log'",
  refreshonly => true,
}

file { "${root}/noop-dir":
  ensure => directory,
  noop   => true,
}
