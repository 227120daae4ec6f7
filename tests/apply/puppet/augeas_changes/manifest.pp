# augeas (augeas_core module) on files under the root, loaded with `incl`
# and `lens`: a setting changed, a setting removed (rm), changes guarded
# by onlyif (true: match size; false: get), a change already in sync (no
# event, ever), a hosts entry added with set and ins in a context,
# guarded by onlyif (runs once), and a file under `root`. The prestate
# exec writes the files.
$root = '/tmp/ferry-puppet-case'

exec { 'prestate':
  command => "/bin/sh -c 'cd ${root} && printf \"A=1\\nB=2\\nOLD=x\\n\" > vars.conf && printf \"127.0.0.1 localhost\\n\" > hosts && printf \"X=0\\n\" > rooted.conf && touch .prestate'",
  creates => "${root}/.prestate",
}

Augeas {
  incl    => "${root}/vars.conf",
  lens    => 'Shellvars.lns',
  require => Exec['prestate'],
}

augeas { 'set-a':
  changes => 'set A 10',
}

augeas { 'rm-old':
  changes => ['rm OLD'],
}

augeas { 'onlyif-true':
  changes => ['set C 3', 'set D \'"four words"\''],
  onlyif  => 'match B size == 1',
}

augeas { 'onlyif-false':
  changes => 'set E 5',
  onlyif  => 'get A == 99',
}

augeas { 'in-sync':
  changes => 'set B 2',
}

augeas { 'hosts':
  incl    => "${root}/hosts",
  lens    => 'Hosts.lns',
  context => "/files${root}/hosts",
  changes => [
    'set 01/ipaddr 10.0.0.1',
    'set 01/canonical web1.example.com',
    'ins alias after 01/canonical',
    'set 01/alias[1] web1',
    'set 01/#comment "front end"',
  ],
  onlyif  => "match *[canonical = 'web1.example.com'] size == 0",
}

augeas { 'rooted':
  root    => $root,
  incl    => '/rooted.conf',
  lens    => 'Shellvars.lns',
  changes => 'set X 1',
}
