# augeas: a lens that does not exist.
$x = augeas("A=1\n", 'Nosuchlens.lns', ['set C 3'])
