# Ruby's to_yaml in a template (filebeat/pure_hash.yml.erb): Psych's
# choice of plain, quoted and literal strings, libyaml's layout (sequences
# in a mapping not indented, empty collections in flow style), wrapping of
# long strings, complex keys, numbers and Ruby's Float#to_s.
$config = {
  'name'       => 'node1.example.com',
  'timeout'    => '0',
  'enabled'    => true,
  'bool_text'  => 'yes',
  'y'          => 'n',
  'path'       => '/etc/filebeat/conf.d/*.yml',
  'empty'      => '',
  'nothing'    => undef,
  'tags'       => [],
  'fields'     => {},
  'numbers'    => [1, -5, 2.5, 0.00001, 1e20, '1,000', '0x1F', '089', '1:30'],
  'quotes'     => ["it's", 'say "hi"', 'a: b', 'a #b', '- x', '<<', " lead", "trail ", "tab\there"],
  'multiline'  => "first\nsecond\n",
  'indented'   => "  code\nmore",
  "two\nlines" => 'complex key',
  'long'       => 'a very long plain string that goes on and on and on past the eighty column limit for sure yes it does',
  'nested'     => [{ 'a' => 1, 'b' => [1, [2, {}]] }, [3, { 'x' => 'y' }]],
  'unicode'    => ['naïve', "\u00a0nbsp", "emoji \u{1F600}"],
}
file { '/tmp/erb_to_yaml':
  content => inline_template('<%= @config.to_yaml %><%= [].to_yaml %><%= "plain".to_yaml %><%= 1.5.to_yaml %>'),
}
