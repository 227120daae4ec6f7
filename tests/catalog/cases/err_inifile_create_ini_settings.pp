# inifile::create_ini_settings needs a path.
inifile::create_ini_settings({ 'main' => { 'a' => 1 } })
