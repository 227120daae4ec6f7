# apply_prep on targets whose inventory has a puppet_library hook.
plan pptest::prep(TargetSpec $targets) {
  $prep = apply_prep($targets)
  return { 'ok' => $prep.ok, 'family' => get_target($targets).facts['os']['family'] =~ String }
}
