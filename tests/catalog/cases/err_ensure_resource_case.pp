# ensure_resource compares parameters with Ruby's ==: 'Present' is not
# 'present', so it declares again, which is a duplicate declaration.
user { 'dan': ensure => present }
ensure_resource('user', 'dan', { 'ensure' => 'Present' })
