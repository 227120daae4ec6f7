# Values and control flow without targets.
plan pptest::values(Integer $n = 3, Array[String] $names = ['a', 'b']) {
  $doubled = $names.map |$x| { "${x}${x}" }
  if $n > 2 {
    $size = 'big'
  } else {
    $size = 'small'
  }
  $e = catch_errors() || {
    fail_plan('nope', 'mymod/oops', { 'why' => 'testing' })
  }
  return({
    'doubled' => $doubled,
    'size'    => $size,
    'kind'    => $e.kind,
    'msg'     => $e.message,
    'details' => $e.details,
    'sum'     => [1, 2, $n].reduce |$a, $b| { $a + $b },
  })
}
