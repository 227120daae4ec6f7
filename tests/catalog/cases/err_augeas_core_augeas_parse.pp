# augeas: content the lens does not parse.
$x = augeas("A=1\nB=\"two\n", 'Shellvars.lns', ['set C 3'])
