package { "p": provider => apt, ensure => present, before => Notify["n"] }
notify { "n": loglevel => info }
exec { "e": command => "/bin/true", provider => shell }
