# stdlib's sprintf_hash: Ruby's sprintf with named references (issue 14).
$h = {
  'a'   => 'x',
  'n'   => 42,
  'f'   => 3.14159,
  'neg' => -5,
  'big' => 1e20,
  'arr' => ['a', 1],
  'hh'  => { 'k' => undef },
  'nl'  => undef,
  't'   => true,
  's12' => '12',
  'ff'  => 2.5,
}
notify { 'doc': message => sprintf_hash('String: %<foo>s / number converted to binary: %<number>b', { 'foo' => 'a string', 'number' => 5 }) }
notify { 'widths': message => sprintf_hash('%<a>s|%<n>d|%<a>-5s|%-5<a>s|%5{a}|%-5{a}|%.1{a}|%05{a}|', $h) }
notify { 'radix': message => sprintf_hash('%<n>x %<n>o %<n>b %<n>X %<n>#x %<n>#o %<n>#b %<n>#X %<n>B %<n>#B', $h) }
notify { 'negative-radix': message => sprintf_hash('%<neg>x %<neg>b %<neg>o %<neg>+x %<neg>#x % <neg>x %<neg>.5x %<neg>08x', $h) }
notify { 'floats': message => sprintf_hash('%<f>.2f %<f>e %<f>g %<n>e %<n>g %<n>f %<f>010.2f|%<f>-10.2f| %<ff>.0f %<f>#g %<n>#.3g', $h) }
notify { 'big': message => sprintf_hash('%<big>s %<big>f %<big>g %<big>e %<big>.3f %<n>10.4e %<f>E %<f>G', $h) }
notify { 'ints': message => sprintf_hash('%<n>+d|% <n>d|%<n>.3d|%<n>-+8d|%<neg>05d|%<neg>.4d|%<s12>d|%<f>d|%<n>u|%<n>i|%<n>08.3f', $h) }
notify { 'values': message => sprintf_hash('%<arr>s %<hh>s [%<nl>s] %<t>s %{n} %{f} %{arr} %{hh} [%{nl}]', $h) }
notify { 'inspect': message => sprintf_hash('%<arr>p %<a>p %<nl>p %<n>p', $h) }
notify { 'chars': message => sprintf_hash('%<n>c|%<a>c|%<n>5c|%<a>-3c|%%|%<a>.1s|%<a>5.1s|', $h) }
notify { 'plain': message => sprintf_hash('no references', {}) }
notify { 'whole': message => sprintf_hash('%s', { 'a' => 1, 'b-c' => 'd' }) }
notify { 'repeat': message => sprintf_hash('%{n}%{n}%<n>s', $h) }
