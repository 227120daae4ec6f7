# ini_setting from puppetlabs-inifile on settings.ini (made by setup_cmd,
# so the noop run sees it too) and on new.ini (no file: created). Each resource sees
# what the earlier ones wrote: an indented value changed (indentation
# kept), a commented-out setting followed by the new one, a setting added
# at the end of its section (before the section's trailing blank line), a
# new section at the end of the file, a global setting (section ''), a
# setting removed (its section, left empty, goes too) with `: ` as the
# separator, a value already right and an absent setting already gone (no
# change), a new setting with key_val_separator '=' and one indented with
# indent_char/indent_width, show_diff false and md5 on value changes.
$root = '/tmp/ferry-puppet-case'

Ini_setting {
  path => "${root}/settings.ini",
}

ini_setting { 'changed':
  section => 'main',
  setting => 'name',
  value   => 'new',
}

ini_setting { 'commented':
  section => 'main',
  setting => 'port',
  value   => 8080,
}

ini_setting { 'added':
  section => 'main',
  setting => 'added',
  value   => 'v a l',
}

ini_setting { 'new-section':
  section => 'newsec',
  setting => 'k',
  value   => 'v',
}

ini_setting { 'global':
  section => '',
  setting => 'top',
  value   => '2',
}

ini_setting { 'removed':
  ensure            => absent,
  section           => 'other',
  setting           => 'x',
  key_val_separator => ': ',
}

ini_setting { 'in-sync':
  section => 'main',
  setting => 'keep',
  value   => 'yes',
}

ini_setting { 'absent-already':
  ensure  => absent,
  section => 'main',
  setting => 'never',
}

ini_setting { 'tight':
  section           => 'main',
  setting           => 'tight',
  value             => true,
  key_val_separator => '=',
}

ini_setting { 'indented':
  section      => 'empty',
  setting      => 'ind',
  value        => 'x',
  indent_char  => "\t",
  indent_width => 2,
}

ini_setting { 'secret':
  section   => 'last',
  setting   => 'secret',
  value     => 'two',
  show_diff => false,
}

ini_setting { 'md5':
  section   => 'last',
  setting   => 'hash',
  value     => 'two',
  show_diff => md5,
}

ini_setting { 'new-file':
  path    => "${root}/new.ini",
  section => 'main',
  setting => 'a',
  value   => '1',
}

ini_setting { 'new-file-global':
  path    => "${root}/new.ini",
  setting => 'g',
  value   => 'x',
}
