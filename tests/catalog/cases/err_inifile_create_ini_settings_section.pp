# inifile::create_ini_settings needs each section to be a hash.
inifile::create_ini_settings({ 'main' => 'x' }, { 'path' => '/tmp/x.ini' })
