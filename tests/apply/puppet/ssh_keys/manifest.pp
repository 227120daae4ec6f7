# SSH authorized keys (sshkeys_core module), in a sandbox. setup_cmd makes
# user ferrykeys with an authorized_keys file: a comment, an unnamed key,
# bob@desk (whose key changes here), old@gone (removed here). The manifest
# makes user ferrynew (home made, no ~/.ssh): its key creates ~/.ssh and
# the file with Puppet's modes and owner. erin@opts gets options it did not
# have. carol@ci goes to a target in a directory of the root that ferrykeys
# owns (Puppet writes it as the user), with an option as a string.
$root = '/tmp/ferry-puppet-case'

user { 'ferrynew':
  ensure     => present,
  home       => '/home/ferrynew',
  managehome => true,
  shell      => '/bin/sh',
}

ssh_authorized_key { 'alice@laptop':
  ensure => present,
  user   => 'ferrynew',
  type   => 'ssh-ed25519',
  key    => 'AAAAC3NzaC1lZDI1NTE5AAAAIAlice0000000000000000000000000000000000',
}

ssh_authorized_key { 'bob@desk':
  user    => 'ferrykeys',
  type    => 'ssh-rsa',
  key     => 'AAAAB3NzaC1yc2EAAAADAQABAAABAQBobNew',
  options => ['from="10.0.0.0/8"', 'no-pty'],
}

ssh_authorized_key { 'old@gone':
  ensure => absent,
  user   => 'ferrykeys',
}

ssh_authorized_key { 'dave@same':
  user => 'ferrykeys',
  type => 'ssh-ed25519',
  key  => 'AAAAC3NzaC1lZDI1NTE5AAAAIDave',
}

ssh_authorized_key { 'erin@opts':
  user    => 'ferrykeys',
  type    => 'ssh-ed25519',
  key     => 'AAAAC3NzaC1lZDI1NTE5AAAAIErin',
  options => ['no-pty', 'command="/bin/date"'],
}

file { "${root}/keys":
  ensure => directory,
  owner  => 'ferrykeys',
  mode   => '0755',
}

ssh_authorized_key { 'carol@ci':
  user    => 'ferrykeys',
  type    => 'ecdsa-sha2-nistp256',
  key     => 'AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYCarol',
  options => 'no-port-forwarding',
  target  => "${root}/keys/carol",
  require => File["${root}/keys"],
}
