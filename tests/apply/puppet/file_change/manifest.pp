# Changes to existing paths. The pre-state is made by an exec (guarded by
# `creates`, so it runs once) that every file resource comes after: old
# content, a wrong mode, owner daemon, a link to the wrong target, a plain
# file where a directory belongs.
$root = '/tmp/ferry-puppet-case'

exec { 'prestate':
  command => "/bin/sh -c 'cd ${root} && printf \"old\\n\" > content && chmod 0600 content && printf \"keep\\n\" > noreplace && chmod 0600 noreplace && printf \"x\\n\" > owned && chown daemon:daemon owned && chmod 0644 owned && printf \"m\\n\" > modes && chmod 0777 modes && ln -s content link && printf \"f\\n\" > wasfile && printf \"l\\n\" > waslink.target && ln -s waslink.target waslink && touch .prestate'",
  creates => "${root}/.prestate",
}

file { "${root}/content":
  ensure  => file,
  content => "new\n",
  mode    => '0644',
  require => Exec['prestate'],
}

file { "${root}/noreplace":
  ensure  => file,
  content => "would replace\n",
  replace => false,
  mode    => '0644',
  require => Exec['prestate'],
}

file { "${root}/owned":
  ensure  => file,
  owner   => 0,
  group   => 'root',
  require => Exec['prestate'],
}

file { "${root}/modes":
  ensure  => file,
  mode    => 'go-w',
  require => Exec['prestate'],
}

file { "${root}/link":
  ensure  => link,
  target  => 'noreplace',
  require => Exec['prestate'],
}

file { "${root}/wasfile":
  ensure  => directory,
  require => Exec['prestate'],
}

file { "${root}/waslink":
  ensure  => file,
  content => "now a file\n",
  require => Exec['prestate'],
}
