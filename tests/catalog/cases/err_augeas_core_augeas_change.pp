# augeas: a change augeas refuses.
$x = augeas("A=1\n", 'Shellvars.lns', ['set C 3', 'frobnicate A'])
