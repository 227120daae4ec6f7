# Resource defaults apply to the resources created after them: Puppet gives
# a resource the defaults visible when it is created (apache::mod::worker's
# File defaults after its `include apache`).
file { '/tmp/before': ensure => file }
File { owner => 'root', mode => '0600' }
file { '/tmp/after': ensure => file }
