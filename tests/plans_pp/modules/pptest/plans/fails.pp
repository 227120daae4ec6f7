plan pptest::fails(TargetSpec $targets) {
  run_command('exit 3', $targets)
  out::message('not reached')
}
