# An empty array of titles declares nothing (gitolite's
# `package { $packages: }` with []); undef is a missing title.
$packages = []
package { $packages: ensure => present }
notify { 'done': }
