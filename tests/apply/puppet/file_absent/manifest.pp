# ensure => absent on a file, a link, a directory tree with force, a
# directory without force, and a path that is already missing.
$root = '/tmp/ferry-puppet-case'

exec { 'prestate':
  command => "/bin/sh -c 'cd ${root} && echo gone > file && ln -s file link && mkdir -p tree/sub && echo x > tree/sub/x && mkdir keepdir && echo y > keepdir/y && echo z > unmanaged && touch .prestate'",
  creates => "${root}/.prestate",
}

file { "${root}/link":
  ensure  => absent,
  require => Exec['prestate'],
}

file { "${root}/file":
  ensure  => absent,
  require => Exec['prestate'],
}

file { "${root}/tree":
  ensure  => absent,
  force   => true,
  require => Exec['prestate'],
}

file { "${root}/keepdir":
  ensure  => absent,
  require => Exec['prestate'],
}

file { "${root}/never-existed":
  ensure => absent,
}
