# Recursive copies from puppet:///modules/ferry_files/tree into
# directories that already hold things: purge of a nested stale tree (a
# directory with files, and a file in a kept directory), a mode and an
# owner given to every generated resource, recurselimit, purge without
# force (a stale directory stays), and a changed file in the tree. The
# pre-state exec makes what is there before.
$root = '/tmp/ferry-puppet-case'

exec { 'prestate':
  command => "/bin/sh -c 'mkdir -p ${root}/full/old/deeper ${root}/full/sub ${root}/limited ${root}/keepdirs/stale && echo x > ${root}/full/old/one && echo y > ${root}/full/old/deeper/two && echo z > ${root}/full/sub/extra.txt && echo changed > ${root}/full/a.txt && echo s > ${root}/keepdirs/stale.txt && touch ${root}/.prestate'",
  creates => "${root}/.prestate",
}

file { "${root}/full":
  ensure  => directory,
  source  => 'puppet:///modules/ferry_files/tree',
  recurse => true,
  purge   => true,
  force   => true,
  mode    => '0640',
  owner   => 'daemon',
  require => Exec['prestate'],
}

file { "${root}/limited":
  ensure       => directory,
  source       => 'puppet:///modules/ferry_files/tree',
  recurse      => true,
  recurselimit => 1,
  require      => Exec['prestate'],
}

file { "${root}/keepdirs":
  ensure  => directory,
  source  => 'puppet:///modules/ferry_files/tree',
  recurse => true,
  purge   => true,
  require => Exec['prestate'],
}

file { "${root}/fresh":
  ensure  => directory,
  source  => 'puppet:///modules/ferry_files/tree',
  recurse => true,
}
