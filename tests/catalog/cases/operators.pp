$r = [
  1 + 2, 7 - 10, 3 * 4, 7 / 2, 7 % 3, 2 << 3, 64 >> 2, 1.5 + 1,
  1 == 1.0, 'abc' == 'ABC', 1 != 2, 3 < 4, 'a' < 'b', 5 >= 5,
  'b' in ['a', 'b'], 'ell' in 'hello', 'k' in { 'k' => 1 }, !true, true and false, false or true,
  [1, 2] + [3], [1, 2, 3] - [2], { 'a' => 1 } + { 'b' => 2 }, -(3), '5' + 1, [1] << 2,
]
notify { 'ops': message => $r }
