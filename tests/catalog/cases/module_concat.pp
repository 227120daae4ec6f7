concat { '/etc/motd': owner => 'root' }
concat::fragment { 'motd header': target => '/etc/motd', content => "hello\n", order => '01' }
