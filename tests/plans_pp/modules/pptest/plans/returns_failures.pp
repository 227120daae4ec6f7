# Returns a ResultSet holding a failure: the plan succeeded (exit 0).
plan pptest::returns_failures(TargetSpec $targets) {
  return run_command('exit 5', $targets, _catch_errors => true)
}
