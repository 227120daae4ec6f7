# Cron entries (crontab provider, Debian's cron_core module; needs the cron
# package's crontab), in a sandbox. setup_cmd gives root a crontab with an
# unmanaged line and two Puppet-named entries. New: an entry for root
# (minute, hour), one for nobody (minute list, weekday, environment).
# Changed: hour and command of change-me. Removed: old-job. Absent and
# missing: never-there.
$root = '/tmp/ferry-puppet-case'

cron { 'nightly':
  ensure  => present,
  user    => 'root',
  command => '/usr/bin/touch /tmp/ferry-nightly',
  minute  => '5',
  hour    => '3',
}

cron { 'nobody-job':
  user        => 'nobody',
  command     => '/bin/echo as nobody',
  minute      => ['0', '30'],
  weekday     => '1-5',
  environment => 'MAILTO=""',
}

cron { 'change-me':
  user    => 'root',
  command => '/bin/echo changed',
  minute  => '0',
  hour    => '2',
}

cron { 'old-job':
  ensure => absent,
  user   => 'root',
}

cron { 'never-there':
  ensure  => absent,
  user    => 'root',
  command => '/bin/false',
}
