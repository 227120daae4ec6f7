$r = [1, 2, 3].map |$v| { $v * 2 }
$s = $h.filter |$k, $v| { $v > 1 }.keys
each($list) |$i, $x| { notice($x) }
