# ensure_resource declares unless defined_with_params finds the resource
# with the same parameters: Ruby's == (10 matches 10.0), an undef value
# matches an unset parameter, a virtual resource counts.
user { 'dan': ensure => present, uid => 10 }
ensure_resource('user', 'dan', { 'uid' => 10.0 })
ensure_resource('user', 'dan', { 'shell' => undef })
@user { 'virt': ensure => present }
ensure_resource('user', 'virt', { 'ensure' => 'present' })
ensure_resource('user', 'new', { 'ensure' => 'present' })
ensure_resources('user', { 'dan' => { 'uid' => 10 }, 'other' => {} })
