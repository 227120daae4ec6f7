# An apply block: compiled per target with its facts and the plan's
# variables, applied through ferry's apply; a second run changes nothing.
plan pptest::apply(TargetSpec $targets, String $dir) {
  run_command("rm -rf ${dir}", $targets)
  apply_prep($targets)
  $greeting = 'applied by a plan'
  $first = apply($targets) {
    file { $dir: ensure => directory }
    file { "${dir}/out.txt":
      ensure  => file,
      content => "${greeting} on ${facts['os']['family']}\n",
    }
  }
  $again = apply($targets, '_catch_errors' => true) {
    file { "${dir}/out.txt":
      ensure  => file,
      content => "${greeting} on ${facts['os']['family']}\n",
    }
  }
  $bad = apply($targets, '_catch_errors' => true) {
    file { 'relative/path': ensure => file }
  }
  return({
    'ok'          => $first.ok,
    'type'        => $first.first =~ ApplyResult,
    'action'      => $first.first.action,
    'changed'     => $first.first.report['status'],
    'again'       => $again.first.report['status'],
    'content'     => run_command("cat ${dir}/out.txt", $targets).first['stdout'] =~ /^applied by a plan on \w+/,
    'bad_ok'      => $bad.ok,
  })
}
