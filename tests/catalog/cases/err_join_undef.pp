# Puppet's join takes an Array.
$x = join(undef, ',')
