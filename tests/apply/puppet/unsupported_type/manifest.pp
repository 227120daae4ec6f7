# A resource of a type Puppet compiles but cannot apply: ferry_fake comes
# from the test module modules/ferry_fake and its only provider is never
# suitable. Its dependents (depth 2) are skipped; unrelated resources run.
$root = '/tmp/ferry-puppet-case'

file { "${root}/unrelated-before":
  ensure  => file,
  content => "runs\n",
}

ferry_fake { 'cannot apply':
  ensure => present,
}

file { "${root}/needs-fake":
  ensure  => file,
  content => "skipped\n",
  require => Ferry_fake['cannot apply'],
}

exec { 'needs-needs-fake':
  command => "/bin/touch ${root}/must-not-exist",
  require => File["${root}/needs-fake"],
}

notify { 'unrelated notify': }
