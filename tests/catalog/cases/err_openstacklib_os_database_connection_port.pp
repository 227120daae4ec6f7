# os_database_connection needs a host with a port.
$c = os_database_connection({ 'dialect' => 'mysql', 'port' => '3306', 'database' => 'd' })
