file { '/tmp/a':
  ensure => file,
  mode   => '0644',
}
package { ['a', 'b']: ensure => installed }
