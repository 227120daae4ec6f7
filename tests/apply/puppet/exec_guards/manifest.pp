# exec parameters: creates, onlyif, unless, refreshonly without an event,
# returns (a list), cwd, environment, path, the shell provider, logoutput.
# Every exec that runs is guarded so that the second apply changes nothing.
$root = '/tmp/ferry-puppet-case'

file { "${root}/work":
  ensure => directory,
}

exec { 'creates':
  command => "/bin/sh -c 'echo made > ${root}/created'",
  creates => "${root}/created",
}

exec { 'onlyif-true':
  command => "touch ${root}/onlyif-ran",
  onlyif  => "test ! -e ${root}/onlyif-ran",
  path    => ['/usr/bin', '/bin'],
}

exec { 'onlyif-false':
  command => "/bin/touch ${root}/must-not-exist-1",
  onlyif  => '/bin/false',
}

exec { 'unless-false':
  command => "touch ${root}/unless-ran",
  unless  => "test -e ${root}/unless-ran",
  path    => '/usr/bin:/bin',
}

exec { 'unless-true':
  command => "/bin/touch ${root}/must-not-exist-2",
  unless  => '/bin/true',
}

exec { 'refreshonly-no-event':
  command     => "/bin/touch ${root}/must-not-exist-3",
  refreshonly => true,
}

exec { 'returns-2':
  command => "/bin/sh -c 'touch ${root}/returns-ran; exit 2'",
  returns => [0, 2],
  creates => "${root}/returns-ran",
}

exec { 'cwd-env':
  command     => '/bin/sh -c \'echo "$GREETING $WHO" > out.txt; pwd >> out.txt\'',
  cwd         => "${root}/work",
  environment => ['GREETING=hello', 'WHO=ferry'],
  creates     => "${root}/work/out.txt",
}

exec { 'shell-provider':
  command  => "echo one > ${root}/shell.txt && echo two >> ${root}/shell.txt",
  provider => shell,
  creates  => "${root}/shell.txt",
}

exec { 'logoutput':
  command   => "/bin/sh -c 'echo line one; echo line two; touch ${root}/logged'",
  logoutput => true,
  creates   => "${root}/logged",
}
