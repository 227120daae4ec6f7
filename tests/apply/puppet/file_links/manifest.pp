# `links`: with `follow`, a link's target is managed (content and mode
# through the link, the link itself left alone; a link to a directory
# taken as the directory); with the default `manage`, the link is what is
# managed (ensure => link retargets it; ensure => file replaces it). The
# pre-state exec makes the links and their targets.
$root = '/tmp/ferry-puppet-case'

exec { 'prestate':
  command => "/bin/sh -c 'mkdir -p ${root}/real ${root}/realdir && echo old > ${root}/real/file.txt && chmod 0600 ${root}/real/file.txt && ln -s real/file.txt ${root}/follow.txt && ln -s realdir ${root}/followdir && echo old > ${root}/real/other.txt && ln -s real/other.txt ${root}/managed.txt && touch ${root}/.prestate'",
  creates => "${root}/.prestate",
}

file { "${root}/follow.txt":
  ensure  => file,
  content => "through the link\n",
  mode    => '0640',
  links   => follow,
  require => Exec['prestate'],
}

file { "${root}/followdir":
  ensure  => directory,
  mode    => '0750',
  links   => follow,
  require => Exec['prestate'],
}

file { "${root}/managed.txt":
  ensure  => file,
  content => "replaced the link\n",
  require => Exec['prestate'],
}
