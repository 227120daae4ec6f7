# augeas: with a lens that does not exist the changes still run first.
$x = augeas("A=1\n", 'Nosuchlens.lns', ['bogus'])
