# Applied with --tags web (see apply_args): resources of class web and
# those tagged web run; the rest, including a resource that web requires,
# are not applied and show in the report as skipped.
$root = '/tmp/ferry-puppet-case'

class web {
  file { "${::root}/web.conf":
    ensure  => file,
    content => "web\n",
    require => File["${::root}/db.conf"],
  }
  notify { 'web notice': }
}

class db {
  file { "${::root}/db.conf":
    ensure  => file,
    content => "db\n",
  }
}

file { "${root}/tagged":
  ensure  => file,
  content => "explicit tag\n",
  tag     => ['web', 'extra'],
}

file { "${root}/untagged":
  ensure  => file,
  content => "no tag\n",
}

exec { 'tagged-exec':
  command => "/bin/touch ${root}/exec-ran",
  creates => "${root}/exec-ran",
  tag     => 'web',
}

include web
include db
