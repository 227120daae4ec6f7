# stdlib's to_toml: the output of stdlib's TomlDumper, byte for byte.
$s = "a\u0001\u007F\u2028\u{10FFFF}\u{1F600}\u0080 é \\ \" #{x} \$y @z \t\n"
notify { 'toml flat':
  message => to_toml({'b' => 2, 'a' => 'one', 'c' => 1.5, 'd' => true, 'e' => undef, 'f' => [1, 'x', [2, 3]]}),
}
notify { 'toml strings': message => to_toml({'s' => $s, 'list' => [$s, "#{y}"]}) }
notify { 'toml numbers': message => to_toml({'i' => -7, 'f1' => 1e15, 'f2' => 1e-5, 'f3' => 123456789012345.0, 'f4' => 0.0001, 'f5' => 100.0}) }
notify { 'toml tables':
  message => to_toml({
    'title'    => 'x',
    'owner'    => {'name' => 'Tom', 'dob' => '1979-05-27'},
    'database' => {'ports' => [8001, 8002], 'enabled' => true, 'temp' => {'cpu' => 79.5}},
    'servers'  => {'alpha' => {'ip' => '10.0.0.1'}, 'beta' => {'ip' => '10.0.0.2'}},
    'empty'    => {},
    'only'     => {'nested' => {'deep' => 1}},
  }),
}
notify { 'toml arrays of tables':
  message => to_toml({
    'products' => [{'name' => 'Hammer', 'sku' => 738594937}, {}, {'name' => 'Nail', 'color' => 'gray', 'dims' => {'w' => 1}, 'parts' => [{'p' => 1}]}],
    'plain'    => [1, {'a' => 1}],
    'none'     => [],
  }),
}
notify { 'toml keys':
  message => to_toml({'bare-key_1' => 1, 'with space' => 2, 'quo"te' => 3, 'dot.ted' => 4, '' => 5, "multi line\nok" => 6, 'ü' => 7, 'sub table' => {'x y' => 1}}),
}
notify { 'toml values': message => to_toml({'r' => /a\/b c/, 'd' => default, 'h' => [{'a' => 'b'}, {'c' => [1]}]}) }
notify { 'toml empty': message => to_toml({}) }
