# file_line from stdlib on two files under the root, declared before the
# files they edit (autorequired). lines.conf: a line appended, a match
# replaced, a line inserted after a section header, a line removed by its
# text (both copies) and one by match (match_for_absence), a line already
# there (no change), a match with append_on_no_match => false and a
# replace => false match (no change). multi.conf (no final newline): every
# line matching replaced (multiple; 'opt=on' is not in the file: if it
# were, Puppet would count the resource in sync and replace nothing), a line inserted after the first
# match of `after` (with a match that finds nothing), a line appended to a
# file whose last line has no newline.
$root = '/tmp/ferry-puppet-case'

file_line { 'append':
  path => "${root}/lines.conf",
  line => 'appended=yes',
}

file_line { 'match':
  path  => "${root}/lines.conf",
  line  => 'bar = new',
  match => '^bar\s*=',
}

file_line { 'after':
  path  => "${root}/lines.conf",
  line  => 'inserted=1',
  after => '^\[section\]$',
}

file_line { 'absent-line':
  ensure => absent,
  path   => "${root}/lines.conf",
  line   => 'remove me',
}

file_line { 'absent-match':
  ensure            => absent,
  path              => "${root}/lines.conf",
  match             => '^old_a\d?=',
  match_for_absence => true,
}

file_line { 'present':
  path => "${root}/lines.conf",
  line => 'keep me',
}

file_line { 'no-append':
  path               => "${root}/lines.conf",
  line               => 'never=1',
  match              => '^never=',
  append_on_no_match => false,
}

file_line { 'no-replace':
  path    => "${root}/lines.conf",
  line    => 'foo=2',
  match   => '^foo=',
  replace => false,
}

file_line { 'multiple':
  path     => "${root}/multi.conf",
  line     => 'opt=on',
  match    => '^#?\s*opt=(off|maybe)$',
  multiple => true,
}

file_line { 'match-after':
  path  => "${root}/multi.conf",
  line  => 'after.first=1',
  match => '^after\.first=',
  after => '^[[:alpha:]]+ (one|two)',
}

file_line { 'append-last':
  path => "${root}/multi.conf",
  line => 'it\'s "quoted" $HOME \\ %s',
}

file { "${root}/lines.conf":
  ensure  => file,
  mode    => '0640',
  content => "# config\nfoo=1\nbar = old\nkeep me\nremove me\nold_a1=1\nold_b=2\nremove me\n[section]\nx=1\n",
  replace => false,
}

file { "${root}/multi.conf":
  ensure  => file,
  content => "opt=off\nblock one\n# opt=maybe\nblock two\nlast",
  replace => false,
}
