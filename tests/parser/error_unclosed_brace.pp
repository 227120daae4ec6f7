file { "/x":
  ensure => file

