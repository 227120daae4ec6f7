class mymod::sub::inner {
  file { '/tmp/inner': ensure => directory }
}
