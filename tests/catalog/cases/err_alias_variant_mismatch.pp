# Every variant of an alias failed: Puppet prints the alias with its
# definition (stdlib's Stdlib::Absolutepath), regex escapes kept.
define pathy(Stdlib::Absolutepath $path) { }
pathy { 'x': path => 'relative' }
