# augeas: a tree the lens cannot write back.
$x = augeas("A=1\n", 'Shellvars.lns', ['set "bad key" 3'])
