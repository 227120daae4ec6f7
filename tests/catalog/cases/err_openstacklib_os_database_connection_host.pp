# os_database_connection: URI::Generic.build refuses a host with a space.
$c = os_database_connection({ 'dialect' => 'mysql', 'host' => 'a b', 'database' => 'd' })
