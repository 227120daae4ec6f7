# A resource or class reference made from an array of titles is an array,
# even of one title; a single title gives a single reference.
package { 'p1': }
package { 'p2': }
$pkgs = ['p1']
file { '/tmp/a': require => Package[$pkgs] }
file { '/tmp/b': require => Package['p1'] }
file { '/tmp/c': require => Resource[Package, ['p2']] }
file { '/tmp/d': require => Package['p1', 'p2'] }
file { '/tmp/e': require => Package[[['p2']]] }
$one = Package[['p1']]
$cls = Class[['main']]
notify { 'kinds':
  message => "${$one =~ Array[Type]} ${Package['p1'] =~ Array[Type]} ${$cls =~ Array[Type]} ${Class['main'] =~ Array[Type]} ${one}",
}
