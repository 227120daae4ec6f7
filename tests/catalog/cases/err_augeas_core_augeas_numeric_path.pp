# augeas: a relative path starting with a number is no node path.
$x = augeas("127.0.0.1 localhost\n", 'Hosts.lns', ['set 1/canonical x'])
