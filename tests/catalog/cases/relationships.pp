package { 'ntp': } -> file { '/etc/ntp.conf': } ~> service { 'ntpd': }
package { 'a': } <- package { 'b': }
service { 'x': } <~ file { '/x': }
notify { 'n1': before => Notify['n2'] }
notify { 'n2': require => [Package['ntp'], Package['a']] }
Package['ntp'] -> Service['x']
