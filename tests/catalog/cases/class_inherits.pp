class parent ($p = 'pv') {
  $inherited = 'from parent'
  file { '/tmp/parent': ensure => file }
}
class child inherits parent {
  notify { "child sees ${inherited} ${p}": }
  File['/tmp/parent'] { mode => '0600' }
}
include child
