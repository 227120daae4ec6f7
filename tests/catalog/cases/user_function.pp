function add(Integer $a, Integer $b = 10) >> Integer {
  $a + $b
}
function greet(String $who) { "hi ${who}" }
notify { 'fn': message => [add(1), add(1, 2), greet('x'), 5.add(5)] }
