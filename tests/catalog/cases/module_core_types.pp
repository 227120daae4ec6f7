cron { 'backup': command => '/usr/local/bin/backup', hour => 2, minute => 0 }
host { 'db.example.com': ip => '10.0.0.20', host_aliases => ['db'] }
ini_setting { 'sample': ensure => present, path => '/tmp/x.ini', section => 'main', setting => 'k', value => 'v' }
