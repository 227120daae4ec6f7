# Cron changes (cron_core) on root's crontab from setup_cmd: `adopted`
# matches an unnamed line (its command and times) and changes nothing;
# env-job's environment changes and its minute becomes absent ('*');
# special-job goes from @daily to @weekly; a new @reboot entry with two
# environment lines; weekday and month by name.
$root = '/tmp/ferry-puppet-case'

cron { 'adopted':
  user    => 'root',
  command => '/bin/echo adopted',
  minute  => '10',
  hour    => '2',
}

cron { 'env-job':
  user        => 'root',
  command     => '/bin/echo env',
  minute      => absent,
  environment => ['PATH=/usr/bin:/bin', 'MAILTO=root'],
}

cron { 'special-job':
  user    => 'root',
  command => '/bin/echo special',
  special => 'weekly',
}

cron { 'at-boot':
  user        => 'root',
  command     => '/bin/echo boot',
  special     => 'reboot',
  environment => ['A=1', 'B=2'],
}

cron { 'named-days':
  user    => 'root',
  command => '/bin/echo days',
  minute  => 0,
  hour    => [1, 13],
  weekday => ['Mon', 'friday'],
  month   => 'jan',
}
