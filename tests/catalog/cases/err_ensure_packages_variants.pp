# When the variants of a parameter fail in different places, Puppet lists
# each (firewall::linux::debian's ensure_packages([$array])).
ensure_packages([['a', 'b']])
