# Refresh events from a file: notify (~>) into a refreshonly exec that
# itself notifies a second refreshonly exec (a chain of depth 2), subscribe
# on a file, execs with their own `refresh` command (one refreshonly, one
# guarded by `unless`, which is already true when its refresh arrives),
# and a refreshonly exec subscribed to another file (refreshed on the first
# apply, which creates that file, not on the second). Each command appends
# a line to events.log, so the order shows in the state.
$root = '/tmp/ferry-puppet-case'

file { "${root}/app.conf":
  ensure  => file,
  content => "version = 2\n",
}

file { "${root}/static.conf":
  ensure  => file,
  content => "static\n",
}

exec { 'reload':
  command     => "/bin/sh -c 'echo reload >> ${root}/events.log'",
  refreshonly => true,
}

exec { 'after-reload':
  command     => "/bin/sh -c 'echo after-reload >> ${root}/events.log'",
  refreshonly => true,
}

exec { 'subscriber':
  command     => "/bin/sh -c 'echo subscriber >> ${root}/events.log'",
  refreshonly => true,
  subscribe   => File["${root}/app.conf"],
}

exec { 'custom-refresh':
  command   => "/bin/sh -c 'echo custom-command >> ${root}/events.log'",
  refresh   => "/bin/sh -c 'echo custom-refresh >> ${root}/events.log'",
  unless    => "/usr/bin/test -e ${root}/events.log",
  subscribe => File["${root}/app.conf"],
}

exec { 'refreshonly-custom':
  command     => "/bin/sh -c 'echo refreshonly-command >> ${root}/events.log'",
  refresh     => "/bin/sh -c 'echo refreshonly-custom-refresh >> ${root}/events.log'",
  refreshonly => true,
  subscribe   => File["${root}/app.conf"],
}

exec { 'static-subscriber':
  command     => "/bin/sh -c 'echo static >> ${root}/events.log'",
  refreshonly => true,
  subscribe   => File["${root}/static.conf"],
}

File["${root}/app.conf"] ~> Exec['reload'] ~> Exec['after-reload']
