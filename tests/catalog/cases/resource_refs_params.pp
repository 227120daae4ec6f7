file { '/etc/a': }
file { '/etc/b': require => File['/etc/a'], subscribe => [File['/etc/a']] }
exec { 'e': command => '/bin/echo', notify => Service['svc'] }
service { 'svc': }
$ref = File['/etc/a']
notify { 'ref': message => "${ref}" }
