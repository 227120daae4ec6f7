run_task('x', $t, name => 'v', other => 1)
notice(a => 1, 'x', b => 2, c => 3,)
$x.merge(a => 1) |$k| { $k }
$v = [a => 1, 3, type => function, function]
$h[type => 1]
notice({ type => 1, function => type })
apply($t, _catch_errors => true) { }
Struct[a => Integer]
