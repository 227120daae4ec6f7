function pick_first(Array $a) {
  $a.each |$x| { if $x > 1 { return($x) } }
  'none'
}
$n = [1, 2, 3, 4].map |$x| { if $x == 2 { next(0) } $x }
$b = [1, 2, 3, 4].each |$x| { if $x == 3 { break() } notify { "b${x}": } }
notify { 'nbr': message => [pick_first([1, 5, 7]), pick_first([0]), $n] }
