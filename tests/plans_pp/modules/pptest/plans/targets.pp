# Targets from the inventory: their attributes, vars and facts, and how
# the plan changes them.
plan pptest::targets(TargetSpec $targets) {
  $t = get_target($targets)
  set_var($t, 'role', 'db')
  add_facts($t, { 'os' => { 'family' => 'Debian' } })
  add_facts($t, { 'os' => { 'release' => '12' } })
  set_feature($t, 'puppet-agent')
  add_to_group($t, 'added')
  $again = get_targets('added')
  return({
    'name'     => $t.name,
    'host'     => $t.host,
    'user'     => $t.user,
    'vars'     => $t.vars,
    'facts'    => facts($t),
    'features' => $t.features,
    'role'     => vars($again[0])['role'],
    'same'     => $again[0] == $t,
    'spec'     => [$t, 'other'] =~ TargetSpec,
    'string'   => "${t}",
  })
}
