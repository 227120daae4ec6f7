# Mounts (mount_core) changing state, in a sandbox with its own mount
# namespace; setup_cmd mounts a, b, c under the root (a and c in
# /etc/fstab). a: mounted -> unmounted; b: mounted without a fstab entry
# (ghost) -> absent; c: stays mounted, its options change (a self refresh
# remounts it); d: not anywhere -> unmounted (only written).
$root = '/tmp/ferry-puppet-case'

mount { "${root}/a":
  ensure  => unmounted,
  device  => 'tmpfs',
  fstype  => 'tmpfs',
  options => 'size=1m',
}

mount { "${root}/b":
  ensure => absent,
}

mount { "${root}/c":
  ensure  => mounted,
  device  => 'tmpfs',
  fstype  => 'tmpfs',
  options => 'size=2m',
}

mount { "${root}/d":
  ensure  => unmounted,
  device  => 'tmpfs',
  fstype  => 'tmpfs',
}
