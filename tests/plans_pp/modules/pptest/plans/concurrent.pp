# parallelize runs its blocks at the same time: the first item waits (on
# $targets) for a file the second one makes (on $other, the same machine). background runs its block while the plan goes
# on: it waits for a file the plan makes after starting it. wait with a
# timeout gives up on a block that takes longer.
plan pptest::concurrent(TargetSpec $targets, TargetSpec $other, String $dir) {
  run_command("rm -rf ${dir}; mkdir -p ${dir}", $targets)
  $par = parallelize(['waiter', 'maker']) |$role| {
    if $role == 'waiter' {
      run_command("i=0; while [ ! -e ${dir}/flag ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i+1)); done; test -e ${dir}/flag && echo saw it", $targets).first['stdout']
    } else {
      run_command("sleep 0.3; touch ${dir}/flag; echo made it", $other).first['stdout']
    }
  }
  $f = background('bg') || {
    run_command("i=0; while [ ! -e ${dir}/go ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i+1)); done; test -e ${dir}/go && echo bg saw go", $targets).first['stdout']
  }
  $state = $f.state
  run_command("touch ${dir}/go", $other)
  $waited = wait($f)
  $late = background('late') || { ctrl::sleep(1) 'too late' }
  $timed = wait($late, 0.2, '_catch_errors' => true)
  return({
    'par'    => $par,
    'state'  => $state,
    'waited' => $waited,
    'after'  => $f.state,
    'timed'  => $timed[0].kind,
  })
}
