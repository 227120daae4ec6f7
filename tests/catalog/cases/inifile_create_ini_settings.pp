# inifile::create_ini_settings declares ini_setting resources (a value, or
# the setting's own parameters), the defaults passed to each; the
# unqualified create_ini_settings does the same after its deprecation.
inifile::create_ini_settings(
  {
    'main' => { 'a' => 1, 'b' => { 'value' => 'x', 'ensure' => 'absent' } },
    'other' => { 'c' => 'three' },
  },
  { 'path' => '/tmp/one.ini', 'key_val_separator' => ' = ' },
)
create_ini_settings({ 's' => { 'k' => 'v' } }, { 'path' => '/tmp/two.ini' })
inifile::create_ini_settings({})
