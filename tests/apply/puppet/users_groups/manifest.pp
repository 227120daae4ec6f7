# Users and groups (useradd/groupadd providers), in a sandbox. New: group
# ferrygrp (gid) and user ferryuser (uid, primary group by name, home made
# by managehome, shell, comment, a supplementary group), which autorequires
# its groups although declared first. Existing (setup_cmd): group ferrychg
# whose gid changes, user ferrymod whose shell and comment change. User
# ferryold, made by the prestate exec, is removed.
$root = '/tmp/ferry-puppet-case'

user { 'ferryuser':
  ensure     => present,
  uid        => 4601,
  gid        => 'ferrygrp',
  home       => '/home/ferryuser',
  managehome => true,
  shell      => '/bin/sh',
  comment    => 'Ferry Test User',
  groups     => ['ferryaux'],
}

group { 'ferrygrp':
  ensure => present,
  gid    => 4601,
}

group { 'ferryaux':
  ensure => present,
  gid    => 4602,
}

group { 'ferrychg':
  ensure => present,
  gid    => 4611,
}

user { 'ferrymod':
  ensure  => present,
  shell   => '/bin/sh',
  comment => 'Modified by Puppet',
}

exec { 'prestate':
  command  => "/usr/sbin/useradd -u 4620 -M -s /usr/sbin/nologin ferryold && touch ${root}/.prestate",
  provider => shell,
  creates  => "${root}/.prestate",
}

user { 'ferryold':
  ensure  => absent,
  require => Exec['prestate'],
}
