# group_by with lambdas of one and two parameters over arrays and hashes.
$r = [
  group_by([1, 2, 3, 4, 5]) |$x| { $x % 2 },
  group_by(['a', 'bb', 'cc', 'd']) |$i, $x| { $x.length },
  group_by({ 'a' => 1, 'b' => 2, 'c' => 1 }) |$kv| { $kv[1] },
  group_by({ 'a' => 1, 'b' => 2, 'c' => 1 }) |$k, $v| { $v },
  group_by([]) |$x| { $x },
]
notify { 'group_by': message => String($r) }
