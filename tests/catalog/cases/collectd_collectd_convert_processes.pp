# collectd_convert_processes: old-style process lists as a hash by name;
# a hash stays as it is.
$old = collectd_convert_processes([
  { 'name' => 'foo', 'regex' => '.*' },
  'alone',
  { 'name' => 'bar', 'regex' => '[0-9]+', 'extra' => 1 },
  'alone',
])
$hash = collectd_convert_processes({ 'x' => { 'regex' => 'y' } })
$empty = collectd_convert_processes([])
notify { 'old': message => String($old) }
notify { 'hash': message => String($hash) }
notify { 'empty': message => String($empty) }
