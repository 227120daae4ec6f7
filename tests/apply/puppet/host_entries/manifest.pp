# host from Debian's host_core module, written to a hosts file under the
# root (target), with aliases and a comment; one entry absent.
$root = '/tmp/ferry-puppet-case'

file { "${root}/hosts":
  ensure  => file,
  content => "127.0.0.1 localhost\n10.0.0.9 old.example.com old\n",
  replace => false,
}

host { 'web1.example.com':
  ensure       => present,
  ip           => '10.0.0.1',
  host_aliases => ['web1', 'www'],
  comment      => 'front end',
  target       => "${root}/hosts",
  require      => File["${root}/hosts"],
}

host { 'db1.example.com':
  ip      => '10.0.0.2',
  target  => "${root}/hosts",
  require => File["${root}/hosts"],
}

host { 'old.example.com':
  ensure  => absent,
  target  => "${root}/hosts",
  require => File["${root}/hosts"],
}
