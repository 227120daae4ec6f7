# inifile::create_ini_settings: a top-level 'path' is a section, and must
# be a hash.
inifile::create_ini_settings({ 'path' => '/tmp/two.ini', 's' => { 'k' => 'v' } }, {})
