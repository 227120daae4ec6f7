# stdlib's glob: Ruby's Dir.glob over Debian's stdlib files (sorted per directory).
$d = '/usr/share/puppet/modules/stdlib/lib/puppet'
$patterns = {
  'star'      => "${d}/functions/to_*.rb",
  'braces'    => "${d}/{parser/functions,functions}/to_{b,y}*.rb",
  'set'       => "${d}/parser/functions/[pr][a-e]*.rb",
  'negated'   => "${d}/parser/functions/[!a-v]*.rb",
  'question'  => "${d}/functions/to_?son.rb",
  'recursive' => '/usr/share/puppet/modules/stdlib/lib/**/to_json*.rb',
  'dirs'      => '/usr/share/puppet/modules/stdlib/lib/puppet/*/',
  'deep dirs' => '/usr/share/puppet/modules/stdlib/lib/**/',
  'dots'      => '/usr/share/puppet/modules/stdlib/lib/.*',
  'dir star'  => '/usr/share/puppet/modules/stdlib/lib/puppet/functions/stdlib/**',
  'deep star' => '/usr/share/puppet/modules/stdlib/lib/puppet/**/ip_in*',
  'plain'     => "${d}/functions/to_json.rb",
  'missing'   => '/nonexistent/*',
  'empty'     => '',
  'escaped'   => "${d}/functions/to\\_json.rb",
  'doubled'   => "${d}/functions//to_yaml.rb",
}
$patterns.each |$k, $p| {
  notify { "glob ${k}": message => String(glob($p)) }
}
notify { 'glob array': message => String(glob(["${d}/functions/to_json.rb", "${d}/functions/to_y*", "${d}/functions/to_json.rb"])) }
notify { 'glob undef': message => String(glob(undef)) }
