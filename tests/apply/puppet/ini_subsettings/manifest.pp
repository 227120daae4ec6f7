# ini_subsetting from puppetlabs-inifile on sub.ini (made by setup_cmd, so
# the noop run sees it). In the quoted `args`: a value changed (-Xmx), one
# appended (-Xss), one removed (-Xms), one inserted at index 1, one
# already right (-Dold=). In `paths` (separator ':', key_val_separator
# '='): one inserted at the start, one after '/a'. In `flags`:
# use_exact_match on a present item (no change). In `gone`: both items
# removed, the last with delete_if_empty (the setting goes). A subsetting of a
# setting not in the file (`opts`, subsetting_key_val_separator '=')
# creates it at the end of the section.
$root = '/tmp/ferry-puppet-case'

Ini_subsetting {
  path    => "${root}/sub.ini",
  section => 'java',
}

ini_subsetting { 'xmx':
  setting    => 'args',
  subsetting => '-Xmx',
  value      => '2g',
  quote_char => '"',
}

ini_subsetting { 'xss':
  setting    => 'args',
  subsetting => '-Xss',
  value      => '1m',
}

ini_subsetting { 'xms':
  ensure     => absent,
  setting    => 'args',
  subsetting => '-Xms',
}

ini_subsetting { 'idx':
  setting      => 'args',
  subsetting   => '-Didx',
  value        => '=on',
  insert_type  => 'index',
  insert_value => 1,
}

ini_subsetting { 'dold':
  setting    => 'args',
  subsetting => '-Dold=',
  value      => '1',
}

ini_subsetting { 'path-start':
  setting              => 'paths',
  subsetting           => '/c',
  subsetting_separator => ':',
  key_val_separator    => '=',
  insert_type          => 'start',
}

ini_subsetting { 'path-after':
  setting              => 'paths',
  subsetting           => '/d',
  subsetting_separator => ':',
  key_val_separator    => '=',
  insert_type          => 'after',
  insert_value         => '/a',
}

ini_subsetting { 'exact':
  setting         => 'flags',
  subsetting      => 'b',
  use_exact_match => true,
}

ini_subsetting { 'flag-a':
  ensure     => absent,
  setting    => 'gone',
  subsetting => 'a',
}

ini_subsetting { 'flag-b':
  ensure          => absent,
  setting         => 'gone',
  subsetting      => 'b',
  delete_if_empty => true,
}

ini_subsetting { 'new-setting':
  setting                      => 'opts',
  subsetting                   => 'x',
  value                        => '1',
  subsetting_key_val_separator => '=',
}
