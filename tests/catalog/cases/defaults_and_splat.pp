File { owner => 'root', group => 'root' }
file { '/a': ensure => file }
$opts = { 'ensure' => 'directory', 'mode' => '0755' }
file { '/b': * => $opts }
file {
  default: ensure => file, mode => '0600';
  '/c': ;
  '/d': mode => '0640';
}
Package { ensure => latest }
package { 'late': }
