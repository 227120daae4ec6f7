class profile::web (
  Integer $port,
  Array[String] $vhosts,
  String $package = 'nginx',
  Optional[String] $docroot = undef,
) {
  package { $package: ensure => installed }
  file { '/etc/web.conf':
    ensure  => file,
    content => template('profile/web.conf.erb'),
    require => Package[$package],
  }
  $vhosts.each |String $v| {
    profile::vhost { $v: port => $port }
  }
}
