class { 'mysql::server': root_password => 'secret' }
