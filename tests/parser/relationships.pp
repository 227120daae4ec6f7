Package['a'] -> Service['b'] ~> Exec['c']
File['/x'] <- Package['p']
Service['s'] <~ File['/etc/s']
