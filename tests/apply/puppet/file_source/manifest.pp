# File sources: puppet:///modules (module ferry_files), a source list whose
# first entry is missing, a local absolute path, and a directory copied
# recursively from the module with purge (an extra file made by the
# pre-state exec is removed). See README.md: the recorder rewrites the
# puppet:/// sources of the catalog it applies into local paths.
$root = '/tmp/ferry-puppet-case'

exec { 'prestate':
  command => "/bin/sh -c 'mkdir -p ${root}/src ${root}/copy/stale && printf \"local source\\n\" > ${root}/src/local.txt && echo stale > ${root}/copy/extra.txt && touch ${root}/.prestate'",
  creates => "${root}/.prestate",
}

file { "${root}/from-module":
  ensure => file,
  source => 'puppet:///modules/ferry_files/present.txt',
  mode   => '0640',
}

file { "${root}/from-list":
  ensure => file,
  source => ['puppet:///modules/ferry_files/missing.txt', 'puppet:///modules/ferry_files/present.txt'],
}

file { "${root}/from-local":
  ensure  => file,
  source  => "${root}/src/local.txt",
  require => Exec['prestate'],
}

file { "${root}/copy":
  ensure  => directory,
  source  => 'puppet:///modules/ferry_files/tree',
  recurse => true,
  purge   => true,
  force   => true,
  require => Exec['prestate'],
}
