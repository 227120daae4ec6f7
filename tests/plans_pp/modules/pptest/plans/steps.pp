# Every kind of step, with the connection kept from one to the next.
plan pptest::steps(TargetSpec $targets, String $dir) {
  $first = run_command('echo "$SSH_CONNECTION"', $targets).first['stdout']
  run_command("rm -rf ${dir} && mkdir -p ${dir}", $targets)
  $up = upload_file('pptest/data.txt', "${dir}/data.txt", $targets)
  $written = write_file("written by a plan\n", "${dir}/written.txt", $targets)
  $script = run_script('pptest/hello.sh', $targets, { 'arguments' => ['one', 'two'] })
  $task = run_task('pptest::echo', $targets, { 'message' => 'hi there' })
  $cat = run_command("cat ${dir}/data.txt ${dir}/written.txt", $targets)
  $down = download_file("${dir}/written.txt", 'pp', $targets)
  $task_fail = run_task('pptest::echo', $targets, 'fails on purpose', { 'message' => 'x', 'fail' => true, '_catch_errors' => true })
  $last = run_command('echo "$SSH_CONNECTION"', $targets).first['stdout']
  return({
    'same_connection' => $first == $last,
    'upload_action'   => $up.first.action,
    'write_ok'        => $written.ok,
    'script'          => $script.first['stdout'],
    'task'            => $task.first.value,
    'cat'             => $cat.first['stdout'],
    'downloaded'      => file::read($down.first['path']),
    'task_error'      => $task_fail.first.error.message,
    'task_error_kind' => $task_fail.first.error.kind,
  })
}
