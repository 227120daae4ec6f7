# The module's own plan: a command on the targets, its output returned.
plan pptest(TargetSpec $targets, String $greeting = 'hello') {
  $results = run_command("echo ${greeting}", $targets)
  return $results.map |$r| { [$r.target.name, $r['stdout'].strip] }.reduce({}) |$acc, $pair| {
    $acc + { $pair[0] => $pair[1] }
  }
}
