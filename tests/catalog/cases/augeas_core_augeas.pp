# augeas_core's augeas: content parsed with a lens, changes applied,
# written back with the lens (the tree is at /store).
$shell = augeas("A=1\nB=\"two\"\n# note\n", 'Shellvars.lns', ['set C 3', 'rm A', 'set B \'"changed"\''])
$hosts = augeas("127.0.0.1 localhost\n", 'Hosts.lns', [
  'set /store/01/ipaddr 192.0.2.1', 'set /store/01/canonical h.example.com', 'set /store/01/alias[1] h',
])
$same = augeas("X=1\n", 'Shellvars.lns', [])
$rm_none = augeas("X=1\n", 'Shellvars.lns', ['rm Y'])
notify { 'shell': message => $shell }
notify { 'hosts': message => $hosts }
notify { 'same': message => $same }
notify { 'rm_none': message => $rm_none }
