$v1 = if true { 'yes' } else { 'no' }
$v2 = case 3 { 1: { 'one' } default: { 'many' } }
$v3 = unless false { 'u' }
$v4 = [1, 2, 3].reduce(10) |$m, $x| { $m + $x }
$v5 = { 'a' => [1, { 'b' => 'deep' }] }['a'][1]['b']
$v6 = "${[1, 2].map |$x| { $x + 1 }}"
notify { 'exprs': message => [$v1, $v2, $v3, $v4, $v5, $v6] }
