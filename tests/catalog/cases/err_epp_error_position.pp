# An error in EPP code points at its template line and column, as Puppet's
# do (ntp.conf.epp's `$ntp::servers.each` on undef).
file { '/tmp/err_epp_error_position':
  content => epp('mymod/error_position.epp'),
}
