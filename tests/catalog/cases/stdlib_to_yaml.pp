# stdlib's to_yaml: Psych's to_yaml of the value, with its options.
$long = 'aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo pppp qqqq rrrr ssss tttt uuuu'
$data = {
  'plain'     => 'hello world',
  'numeric'   => '42',
  'float'     => '1.5',
  'bool_word' => 'yes',
  'y'         => 'n',
  'null_word' => 'null',
  'colon'     => 'a: b',
  'hash_mark' => '# not a comment',
  'lead'      => ' leading space',
  'trail'     => 'trailing space ',
  'empty'     => '',
  'quote'     => "it's \"quoted\"",
  'lines'     => "first\nsecond\n",
  'lines2'    => "first\n\n  indented\nlast",
  'tab'       => "a\tb",
  'unicode'   => 'héllo wörld ☃ 😀',
  'control'   => "bell\u0007",
  'octal'     => '0789',
  'date'      => '2024-01-02',
  'star'      => '*star',
  'int'       => 42,
  'neg'       => -7,
  'real'      => 3.25,
  'big'       => 1e20,
  'true'      => true,
  'false'     => false,
  'nothing'   => undef,
  'default'   => default,
  'list'      => [1, 'two', [3, 4], {'k' => 'v'}, [], {}],
  'nested'    => {'a' => {'b' => {'c' => [true, false]}}},
  '1'         => 'key like an integer',
  'true_key'  => 'x',
  'long'      => $long,
  'regexp'    => /ab c/,
}
notify { 'yaml': message => to_yaml($data) }
notify { 'yaml keys': message => to_yaml({'true' => 1, 'yes' => 2, '1.5' => 3, '~' => 4, '' => 5, "multi\nline" => 6}) }
notify { 'yaml scalar': message => to_yaml('just a string') }
notify { 'yaml undef': message => to_yaml(undef) }
notify { 'yaml int': message => to_yaml(12) }
notify { 'yaml array': message => to_yaml(['a', ['b', ['c']]]) }
notify { 'yaml empty': message => to_yaml({}) }
notify { 'yaml indentation': message => to_yaml({'a' => {'b' => [1, {'c' => 3, 'd' => "l1\nl2"}], 'e' => "  lead\nx"}}, {indentation => 4}) }
notify { 'yaml indentation out of range': message => to_yaml({'a' => [{'b' => 1}]}, {indentation => 12}) }
notify { 'yaml line_width': message => to_yaml({'a' => $long, 'b' => ['yyyyyyyyyyyyy yyyyyyyyyyyy yyyyyyyyyyyy'], 'c' => "x\n  y  z", 'abcdefghijklmnopqrstuvwxyz' => 1}, {line_width => 20}) }
notify { 'yaml line_width narrow': message => to_yaml({' lead' => 'abcdefghijkl  mm', 'y' => "  \n trail  \n\n", 'z' => "a\n\nb c d e f g\n"}, {line_width => 5}) }
notify { 'yaml line_width zero': message => to_yaml(['abc', 'y', 7], {line_width => 0}) }
notify { 'yaml line_width unlimited': message => to_yaml([$long], {line_width => -1}) }
notify { 'yaml other options': message => to_yaml(['abc'], {canonical => false, foo => 'bar'}) }
