class base_o { file { '/etc/o': ensure => file, require => Package['p1'] } package { ['p1', 'p2']: } }
class child_o inherits base_o { File['/etc/o'] { require +> Package['p2'], mode => '0600' } }
include child_o
