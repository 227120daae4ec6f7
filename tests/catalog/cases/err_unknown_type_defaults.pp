# Resource defaults of a type nobody defines: Puppet evaluates the type
# reference first and fails there (ceph's and filebeat's Yumrepo on Debian).
Nosuchtype {
  ensure => present,
}
notify { 'not reached': }
