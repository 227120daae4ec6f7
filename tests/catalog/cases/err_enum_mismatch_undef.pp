# An Enum refuses a value that is not a string with Puppet's pattern
# mismatch, and prints its values sorted (systemd::networkd's
# `Enum['stopped', 'running'] $ensure` given undef).
class svc (Enum['stopped', 'running'] $ensure) {}
class { 'svc': ensure => undef }
