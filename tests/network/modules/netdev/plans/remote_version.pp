# A remote task from a Puppet-language plan: a device with run-on has it
# run on that target, as `ferry task run` and YAML plans do.
plan netdev::remote_version(TargetSpec $targets) {
  return run_task('netdev::show_version', $targets).first.value
}
