# monit_validate_tests refuses an unknown test type with its message.
$t = monit_validate_tests('system', [{ 'type' => 'connection', 'port' => 80 }])
