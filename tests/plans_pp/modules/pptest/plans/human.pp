# Bolt's human output (Starting/Finished lines for the plan and its
# steps), a bare hash literal after return, set_config (the target's
# transport options for the rest of the plan) and _env_vars (given on the
# command's standard input, never on its command line).
plan pptest::human(TargetSpec $targets) {
  $t = get_targets($targets)[0]
  set_config($t, 'ssh', { 'connect-timeout' => 9 })
  set_config($t, ['ssh', 'user'], 'root')
  $env = run_command('echo "[$FERRY_GREETING]"; ps -o args= -p $$', $targets,
    '_env_vars' => { 'FERRY_GREETING' => 'hi there' })
  out::message('said it')
  return { 'env' => $env.first['stdout'].split("\n")[0], 'timeout' => $t.config['ssh']['connect-timeout'],
    'user' => $t.user, 'cmdline_has_value' => 'hi there' in $env.first['stdout'].split("\n")[1] }
}
