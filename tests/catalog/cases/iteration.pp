$list = ['a', 'b', 'c']
$list.each |$i, $v| { notify { "each ${i} ${v}": } }
$m = $list.map |$v| { "${v}${v}" }
$f = [1, 2, 3, 4].filter |$v| { $v % 2 == 0 }
$sum = [1, 2, 3, 4].reduce |$acc, $v| { $acc + $v }
$h = { 'x' => 1, 'y' => 2 }
$h.each |$k, $v| { notify { "hash ${k}=${v}": } }
$hm = $h.map |$pair| { $pair[0] }
$w = with(1, 2) |$a, $b| { $a + $b }
notify { 'results': message => [$m, $f, $sum, $hm, $w, $h.filter |$k, $v| { $v > 1 }] }
