# Puppet validates the finished catalog: a relationship metaparameter that
# names a resource the catalog does not hold fails with the resource's file
# and line (filebeat::install's `notify => Class['filebeat::service']`).
class probe {
  notify { 'here': }
  notify { 'x':
    require => [Notify['here'], Package['not-declared']],
  }
}
include probe
