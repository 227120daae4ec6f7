# Classes ordered by relationships: Class[first] -> Class[second], and
# class third requires class second; they are declared in the opposite
# order. Each class runs an exec appending its name to order.log (once,
# guarded by creates), and holds a file. A defined type instance sits in
# class second. Unrelated top-level resources keep manifest order.
$root = '/tmp/ferry-puppet-case'

define ordered::step($label) {
  exec { "step-${title}":
    command => "/bin/sh -c 'echo ${label} >> ${::root}/order.log && touch ${::root}/${title}.done'",
    creates => "${::root}/${title}.done",
  }
}

class third {
  require second
  ordered::step { 'third': label => 'third' }
  file { "${::root}/third.txt": ensure => file, content => "3\n" }
}

class second {
  ordered::step { 'second': label => 'second' }
  file { "${::root}/second.txt": ensure => file, content => "2\n" }
}

class first {
  ordered::step { 'first': label => 'first' }
  file { "${::root}/first.txt": ensure => file, content => "1\n" }
}

notify { 'top-a': }
include third
include second
include first
notify { 'top-b': }

Class['first'] -> Class['second']
