# A resource body's title is checked before its attributes are evaluated:
# an undef title fails even when an attribute would fail too
# (ssh::client::config's file { $ssh::params::ssh_config: content => template(...) }).
file { $facts['nosuchfact']:
  content => template('mymod/no_such_template.erb'),
}
