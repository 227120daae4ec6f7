# Sensitive values: a new file with Sensitive content, an existing file
# whose content changes to a Sensitive value, a notify with a Sensitive
# message, and a file with ordinary content beside them.
$root = '/tmp/ferry-puppet-case'

exec { 'prestate':
  command => "/bin/sh -c 'echo old-secret > ${root}/rotated && touch ${root}/.prestate'",
  creates => "${root}/.prestate",
}

file { "${root}/secret":
  ensure  => file,
  content => Sensitive("s3cret password\n"),
  mode    => '0600',
}

file { "${root}/rotated":
  ensure  => file,
  content => Sensitive("new-secret\n"),
  mode    => '0600',
  require => Exec['prestate'],
}

notify { 'secret message':
  message => Sensitive('the password is hunter2'),
}

file { "${root}/plain":
  ensure  => file,
  content => "not secret\n",
}
