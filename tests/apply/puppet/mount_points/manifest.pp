# Mounts (mount_core module), in a sandbox with its own mount namespace.
# A fstab under the root (target) exists before (replace => false): a
# comment, an unmanaged proc line, an entry for old (removed here) and one
# for opts (its options and dump change; it is not mounted); defined is
# only written to it. A tmpfs is mounted (its mount point made first): it
# uses the default target /etc/fstab, because Puppet mounts with `mount
# NAME`, which finds the entry only in /etc/fstab.
$root = '/tmp/ferry-puppet-case'

file { "${root}/fstab":
  ensure  => file,
  content => "# static file system information\nproc /proc proc defaults 0 0\ntmpfs ${root}/old tmpfs defaults 0 0\ntmpfs   ${root}/opts   tmpfs   defaults   0   0\n",
  replace => false,
}

file { ["${root}/mnt", "${root}/mnt/tmp"]:
  ensure => directory,
}

mount { "${root}/mnt/tmp":
  ensure  => mounted,
  device  => 'tmpfs',
  fstype  => 'tmpfs',
  options => 'size=1m,mode=0750',
  require => File["${root}/mnt/tmp"],
}

mount { "${root}/defined":
  ensure  => defined,
  device  => 'tmpfs',
  fstype  => 'tmpfs',
  target  => "${root}/fstab",
  require => File["${root}/fstab"],
}

mount { "${root}/opts":
  ensure  => present,
  device  => 'tmpfs',
  fstype  => 'tmpfs',
  options => 'noatime',
  dump    => 1,
  target  => "${root}/fstab",
  require => File["${root}/fstab"],
}

mount { "${root}/old":
  ensure  => absent,
  target  => "${root}/fstab",
  require => File["${root}/fstab"],
}
