# os_database_connection refuses a port that is not a string.
$c = os_database_connection({ 'dialect' => 'mysql', 'host' => 'h', 'port' => 3306, 'database' => 'd' })
