# The same check for a resource-like class declaration: the line of the
# metaparameter, not of the declaration (filebeat::install).
class other {}
class { 'other':
  notify => Class['not::declared'],
}
