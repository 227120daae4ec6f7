# A step that fails on some targets, its errors caught, and the
# ResultSet and Result methods over what came back.
plan pptest::results(TargetSpec $targets) {
  $all = get_targets($targets)
  $rs = run_command('if [ "$(hostname)" = x ]; then :; fi; test -n "$FAIL_ME" && exit 4; echo "out"', $all, '_catch_errors' => true)
  $bad = run_command('exit 4', $all, 'a description', { '_catch_errors' => true })
  $first = $bad.first
  return({
    'ok'          => $rs.ok,
    'count'       => $rs.count,
    'empty'       => $rs.empty,
    'names'       => $rs.names,
    'stdout'      => $rs.first['stdout'],
    'value_out'   => $rs.first.value['stdout'],
    'status'      => $rs.first.status,
    'action'      => $rs.first.action,
    'bad_ok'      => $bad.ok,
    'error_names' => $bad.error_set.names,
    'ok_names'    => $bad.ok_set.names,
    'kind'        => $first.error.kind,
    'exit_code'   => $first.value['exit_code'],
    'found'       => $bad.find($first.target.name).target.name,
    'filtered'    => $rs.filter_set |$r| { $r.ok }.count,
    'mapped'      => $rs.map |$r| { $r.target.name },
    'indexed'     => $rs[0].target.name,
    'is_set'      => $rs =~ ResultSet,
    'is_result'   => $first =~ Result,
    'target_type' => $first.target =~ Target,
    'message'     => $first.message,
    'data'        => $bad.to_data[0]['status'],
  })
}
