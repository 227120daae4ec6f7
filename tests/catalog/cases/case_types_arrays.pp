$v = [1, 2]
case $v {
  [1, 2]: { $m1 = 'array equal' }
  default: { $m1 = 'no' }
}
case 42 {
  String: { $m2 = 'string' }
  Integer[40, 50]: { $m2 = 'int in range' }
  default: { $m2 = 'other' }
}
case 'x' {
  'a', 'b': { $m3 = 'ab' }
  default: { $m3 = 'default' }
}
notify { 'cases': message => [$m1, $m2, $m3] }
