# The Puppet-language plan benchmark (issue 13; benches/tasks_pplan.py): ten
# steps on every target with run_command, run_task, upload_file and a
# parallelize over the targets, against the very same work done by a pyinfra
# deploy (benches/tasks/deploy_pplan.py). Every task step is benchmod::step
# (write value-<n> to <dir>/step-<n>, read it back); the harness reads
# step-1 … step-6, payload.txt, payload.sha and settings.conf on every
# target afterwards. Run as
#   ferry plan run benchmod::ten targets=all dir=<dir> -i INV --modulepath benches/tasks/modules --format json
plan benchmod::ten(
  TargetSpec $targets,
  String[1] $dir = '/tmp/ferry-bench',
) {
  # 1: the work directory
  run_command("mkdir -p ${dir}", $targets)
  # 2: a task writes step-1
  run_task('benchmod::step', $targets, { 'n' => 1, 'dir' => $dir })
  # 3: a file from the module
  upload_file('benchmod/payload.txt', "${dir}/payload.txt", $targets)
  # 4: its checksum, computed on the target
  run_command("cd ${dir} && sha256sum payload.txt > payload.sha", $targets)
  # 5: a task writes step-2
  run_task('benchmod::step', $targets, { 'n' => 2, 'dir' => $dir })
  # 6: a command writes step-3
  run_command("printf 'value-%s\\n' 3 > ${dir}/step-3 && cat ${dir}/step-3", $targets)
  # 7 and 8: each target on its own, a task then a command
  $each = parallelize(get_targets($targets)) |$t| {
    run_task('benchmod::step', $t, { 'n' => 4, 'dir' => $dir })
    run_command("printf 'value-%s\\n' 5 > ${dir}/step-5 && cat ${dir}/step-5", $t).first.value['stdout']
  }
  # 9: a second file
  upload_file('benchmod/settings.conf', "${dir}/settings.conf", $targets)
  # 10: a task writes step-6
  $last = run_task('benchmod::step', $targets, { 'n' => 6, 'dir' => $dir })
  $result = { 'ok' => $last.ok_set.names, 'parallel' => $each }
  return $result
}
