# A resource's title sets parameters through its type's title patterns when
# Puppet writes the catalog: file strips trailing slashes (the path shows
# when it differs from the title), keystone's composite namevars split
# region/name/type and name::domain, and explicit parameters win.
file { '/tmp/ferry-tp/': ensure => directory }
file { '/tmp/ferry-tp2//': ensure => directory, path => '/tmp/ferry-tp2' }
file { '/': ensure => directory }
keystone_endpoint { 'RegionOne/aodh::alarming': ensure => present, public_url => 'http://x' }
keystone_endpoint { 'RegionTwo/glance': type => 'image' }
keystone_user { 'heat_admin::heat': ensure => present }
keystone_service { 'nova::compute': ensure => present }
keystone_user_role { 'admin@openstack': roles => ['admin'] }
keystone_tenant { 'services': ensure => present }
