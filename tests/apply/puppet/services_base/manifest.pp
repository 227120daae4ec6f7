# Services, in a sandbox (no systemd; PID 1 just reaps orphans). ferryd is
# a fake daemon (a detached `sleep` with a pid file) whose start and stop
# are logged to NAME.log. Provider base: ferry-a started (its config file
# changes too, but a service started in the run drops its pending refresh),
# ferry-b stopped and ferry-d restarted (stop, start) by a changed config
# file (~>); the prestate exec starts ferry-b, ferry-d and ferry-e first.
# Provider debian (/etc/init.d scripts; update-rc.d; /usr/sbin/policy-rc.d
# denies invoke-rc.d here, so Puppet counts the S links in /etc/rc?.d):
# ferry-c started and enabled (one `ensure` event: Puppet enables inside
# the ensure change), ferry-e (running) enabled. (No `enable =>
# false`: Puppet's disable looks for the sysv-rc package, which Debian 12
# lacks, falls back to `update-rc.d NAME stop ...`, which re-creates the
# links, and so reports "enable changed 'true' to 'false'" on every run.)
$root = '/tmp/ferry-puppet-case'

file { "${root}/ferryd":
  ensure  => file,
  mode    => '0755',
  content => @("SCRIPT"/$),
    #!/bin/sh
    # ferryd start|stop|status NAME: a fake daemon for ferry's apply tests
    pid=${root}/\$2.pid
    case \$1 in
      start)
        if [ -f "\$pid" ] && kill -0 "\$(cat "\$pid")" 2>/dev/null; then exit 0; fi
        setsid sleep 100000 </dev/null >/dev/null 2>&1 &
        echo \$! > "\$pid"
        echo start >> ${root}/\$2.log
        ;;
      stop)
        if [ -f "\$pid" ]; then kill "\$(cat "\$pid")"; rm -f "\$pid"; fi
        echo stop >> ${root}/\$2.log
        ;;
      status)
        [ -f "\$pid" ] && kill -0 "\$(cat "\$pid")" 2>/dev/null
        ;;
      *)
        echo "usage: \$0 start|stop|status NAME" >&2; exit 2
        ;;
    esac
    | SCRIPT
}

file { "${root}/ferry-a.conf":
  ensure  => file,
  content => "setting = 1\n",
}

service { 'ferry-a':
  ensure    => running,
  provider  => base,
  start     => "${root}/ferryd start ferry-a",
  stop      => "${root}/ferryd stop ferry-a",
  status    => "${root}/ferryd status ferry-a",
  require   => File["${root}/ferryd"],
  subscribe => File["${root}/ferry-a.conf"],
}

exec { 'prestate':
  command  => "${root}/ferryd start ferry-b && ${root}/ferryd start ferry-d && ${root}/ferryd start ferry-e && touch ${root}/.prestate",
  provider => shell,
  creates  => "${root}/.prestate",
  require  => [File["${root}/ferryd"], File['/etc/init.d/ferry-e']],
}

service { 'ferry-b':
  ensure   => stopped,
  provider => base,
  start    => "${root}/ferryd start ferry-b",
  stop     => "${root}/ferryd stop ferry-b",
  status   => "${root}/ferryd status ferry-b",
  require  => Exec['prestate'],
}

file { "${root}/ferry-d.conf":
  ensure  => file,
  content => "setting = 2\n",
}

service { 'ferry-d':
  ensure   => running,
  provider => base,
  start    => "${root}/ferryd start ferry-d",
  stop     => "${root}/ferryd stop ferry-d",
  status   => "${root}/ferryd status ferry-d",
  require  => Exec['prestate'],
}

File["${root}/ferry-d.conf"] ~> Service['ferry-d']

# LSB init scripts for the debian provider, all calling ferryd.
['ferry-c', 'ferry-e'].each |$svc| {
  file { "/etc/init.d/${svc}":
    ensure  => file,
    mode    => '0755',
    content => @("SCRIPT"/$),
      #!/bin/sh
      ### BEGIN INIT INFO
      # Provides:          ${svc}
      # Required-Start:    \$remote_fs
      # Required-Stop:     \$remote_fs
      # Default-Start:     2 3 4 5
      # Default-Stop:      0 1 6
      # Short-Description: fake daemon for ferry's apply tests
      ### END INIT INFO
      exec ${root}/ferryd "\$1" ${svc}
      | SCRIPT
  }
}

service { 'ferry-c':
  ensure    => running,
  enable    => true,
  provider  => debian,
  hasstatus => true,
  require   => [File['/etc/init.d/ferry-c'], File["${root}/ferryd"]],
}

# Running (prestate) but not enabled: only enable changes.
service { 'ferry-e':
  ensure    => running,
  enable    => true,
  provider  => debian,
  hasstatus => true,
  require   => Exec['prestate'],
}
