# Symbolic modes on new and existing files and directories: '=', '+', '-',
# several clauses, X (which Puppet accepts only with '+'), and an invalid
# use of X with '=' that fails its resource. Existing paths get their
# pre-state (mode 0600 / 0700) from an exec.
$root = '/tmp/ferry-puppet-case'

exec { 'prestate':
  command => "/bin/sh -c 'cd ${root} && touch old-file old-exec && chmod 0600 old-file && chmod 0700 old-exec && mkdir old-dir && chmod 0700 old-dir && touch .prestate'",
  creates => "${root}/.prestate",
}

file { "${root}/new-plus":
  ensure  => file,
  content => "new\n",
  mode    => 'u+x',
}

file { "${root}/new-minus":
  ensure  => file,
  content => "new\n",
  mode    => 'go-r',
}

file { "${root}/new-dir-X":
  ensure => directory,
  mode   => 'u=rwx,go=,a+X',
}

file { "${root}/old-file":
  ensure  => file,
  mode    => 'g+r,o+r',
  require => Exec['prestate'],
}

file { "${root}/old-exec":
  ensure  => file,
  mode    => 'go+X',
  require => Exec['prestate'],
}

file { "${root}/old-dir":
  ensure  => directory,
  mode    => 'o+rX',
  require => Exec['prestate'],
}

file { "${root}/bad-X":
  ensure => directory,
  mode   => 'ug=rwX,o=',
}

file { "${root}/after-bad":
  ensure  => file,
  content => "runs: the bad mode fails only its own resource\n",
}
