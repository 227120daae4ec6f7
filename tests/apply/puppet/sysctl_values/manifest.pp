# sysctl and sysctl_runtime from the duritong sysctl module, on keys of
# the IPC and UTS namespaces only (the sandboxes share the host's network
# namespace), with targets under the root. sysctl.conf (made by
# setup_cmd, with an old `# HEADER:` line and trailing blank lines): a
# value changed through the module's sysctl::value (file and runtime), a
# key removed, a key added (and set at runtime), a key with leading blanks
# and one whose value holds `=` left alone but rewritten as Puppet
# rewrites every record (`name=value`). new.conf does not exist: created.
# sysctl_runtime: a value already right (no change).
$root = '/tmp/ferry-puppet-case'

sysctl::value { 'kernel.shmmni':
  value  => '8192',
  target => "${root}/sysctl.conf",
}

sysctl { 'kernel.msgmax':
  ensure => absent,
  target => "${root}/sysctl.conf",
}

sysctl { 'kernel.shmmax':
  val    => '68719476736',
  target => "${root}/sysctl.conf",
}

sysctl_runtime { 'kernel.shmmax':
  val     => '68719476736',
  require => Sysctl['kernel.shmmax'],
}

sysctl { 'kernel.domainname':
  val    => 'ferry.example',
  target => "${root}/new.conf",
}

sysctl_runtime { 'kernel.domainname':
  val => 'ferry.example',
}

sysctl_runtime { 'kernel.msgmax':
  val => '8192',
}
