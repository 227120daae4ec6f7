# host (host_core) property changes in a hosts file under the root: ip,
# host_aliases and comment of web1 change; db1's aliases are emptied and
# it gets a comment; dup is on two lines (the last is the resource's); the
# file's other lines are re-rendered with tabs, its comment kept.
$root = '/tmp/ferry-puppet-case'

file { "${root}/hosts":
  ensure  => file,
  mode    => '0640',
  content => "# my hosts\n127.0.0.1   localhost   # loopback\n10.0.0.1 web1.example.com web1 www # front end\n10.0.0.2  db1.example.com  db1   db\n\n10.0.0.7 dup.example.com first\n10.0.0.8 dup.example.com second\n",
  replace => false,
}

host { 'web1.example.com':
  ip           => '10.0.0.5',
  host_aliases => ['web1', 'w3'],
  comment      => 'back end',
  target       => "${root}/hosts",
  require      => File["${root}/hosts"],
}

host { 'db1.example.com':
  ip           => '10.0.0.2',
  host_aliases => [],
  comment      => 'database',
  target       => "${root}/hosts",
  require      => File["${root}/hosts"],
}

host { 'dup.example.com':
  ip      => '10.0.0.9',
  target  => "${root}/hosts",
  require => File["${root}/hosts"],
}
