[$a, $b] = [1, 2]
$c = $d = 'chain'
notify { 'destr': message => [$a, $b, $c, $d] }
