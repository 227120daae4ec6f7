# partition with lambdas of one and two parameters over arrays and hashes.
$r = [
  partition([1, 2, 3, 4, 5]) |$x| { $x % 2 == 0 },
  partition(['a', 'b', 'c']) |$i, $x| { $i > 0 },
  partition({ 'a' => 1, 'b' => 2 }) |$kv| { $kv[1] > 1 },
  partition({ 'a' => 1, 'b' => 2 }) |$k, $v| { $k == 'a' },
  partition([]) |$x| { true },
]
notify { 'partition': message => String($r) }
