# A failing exec (exit 3) with output: its dependents (a require chain of
# depth 2, and a refreshonly exec it notifies) are skipped; unrelated
# resources, declared before and after it, still run. An exec whose exit
# code 3 is listed in returns succeeds.
$root = '/tmp/ferry-puppet-case'

file { "${root}/before":
  ensure  => file,
  content => "unrelated, declared first\n",
}

exec { 'fails':
  command => "/bin/sh -c 'echo about to fail; echo bad thing >&2; exit 3'",
}

file { "${root}/level1":
  ensure  => file,
  content => "depends on the failed exec\n",
  require => Exec['fails'],
}

file { "${root}/level2":
  ensure  => file,
  content => "depends on level1\n",
  require => File["${root}/level1"],
}

exec { 'refreshed-by-failure':
  command     => "/bin/touch ${root}/must-not-exist",
  refreshonly => true,
  subscribe   => Exec['fails'],
}

exec { 'returns-3-ok':
  command => "/bin/sh -c 'touch ${root}/three; exit 3'",
  returns => 3,
  creates => "${root}/three",
}

notify { 'still runs': }

file { "${root}/after":
  ensure  => file,
  content => "unrelated, declared last\n",
}
