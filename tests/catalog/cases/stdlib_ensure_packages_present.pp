# stdlib's ensure_packages: default attributes' `ensure => present` become
# `installed` (openstacklib::openstackclient); a package's own attributes
# in the hash form are kept as given.
ensure_packages('pkg-a', { 'ensure' => 'present', 'tag' => 'openstack' })
ensure_packages(['pkg-b', 'pkg-c'])
ensure_packages({ 'pkg-d' => { 'ensure' => 'present' }, 'pkg-e' => {} }, { 'ensure' => 'present' })
ensure_packages('pkg-f', { 'ensure' => 'latest' })
