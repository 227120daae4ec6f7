$r = [1, 2, 3, 4].map |$x| { $x * 2 }.filter |$x| { $x > 2 }
$s = { 'a' => 1, 'b' => 2 }.map |$k, $v| { "${k}=${v}" }.join(',')
$d = [1, 2].map |$x, $y = 10| { $x + $y }
$t = [[1, 'a'], [2, 'b']].map |$pair| { $pair[1] }
notify { 'chain': message => [$r, $s, $d, $t, [3, 1, 2].sort, 'a,b'.split(',').size] }
