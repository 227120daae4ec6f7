# Files, directories and links created in a fresh root: content, numeric and
# symbolic modes, owner/group by name and by number, a child declared before
# its parent directory (autorequire), a link and a dangling link.
$root = '/tmp/ferry-puppet-case'

file { "${root}/etc/app/app.conf":
  ensure  => file,
  content => "listen = 8080\nworkers = 4\n",
  mode    => '0640',
  owner   => 'root',
  group   => 'root',
}

file { "${root}/etc":
  ensure => directory,
  mode   => '0755',
}

file { "${root}/etc/app":
  ensure => directory,
  mode   => 'u=rwx,g=rx,o=',
  owner  => 0,
  group  => 0,
}

file { "${root}/readme.txt":
  ensure  => present,
  content => "symbolic mode\n",
  mode    => 'u=rw,go=r',
}

file { "${root}/empty":
  ensure => file,
}

file { "${root}/script.sh":
  ensure  => file,
  content => "#!/bin/sh\necho hi\n",
  mode    => '0755',
}

file { "${root}/data":
  ensure => directory,
  mode   => 'a=rx,u+w',
}

file { "${root}/current.conf":
  ensure => link,
  target => "${root}/etc/app/app.conf",
}

file { "${root}/dangling":
  ensure => link,
  target => 'does-not-exist',
}
