file { '/etc/motd': ensure => file, content => "hello\n", mode => '0644' }
package { ['vim', 'curl']: ensure => installed }
service { 'ssh': ensure => running, enable => true }
exec { 'refresh': command => '/bin/true', refreshonly => true }
user { 'deploy': uid => 1500, groups => ['adm', 'sudo'] }
