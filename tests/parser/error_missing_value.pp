class { 
  'x': ensure => }
