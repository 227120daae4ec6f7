# Hash entries without braces as the last argument of plan functions and
# method calls (Puppet's grammar folds adjacent `key => value` entries into
# one hash): task parameters with `_catch_errors` among them, and methods.
plan pptest::pairs(TargetSpec $targets) {
  $said = run_task('pptest::echo', $targets, message => 'hi', fail => false)
  $failed = run_task('pptest::echo', $targets, 'described', message => 'no', fail => true, _catch_errors => true)
  $merged = $said.first.value.merge(extra => 1, type => function)
  return({
    'said'   => $said.first['said'],
    'failed' => $failed.first.error.kind,
    'merged' => $merged,
    'list'   => [one => 1, 'two'],
  })
}
