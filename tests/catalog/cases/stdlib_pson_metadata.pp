# stdlib's parsepson (JSON text, the default when it does not parse) and
# load_module_metadata (a module's metadata.json, {} when allowed to be
# missing) (issue 14).
notify { 'parsepson': message => [parsepson('{"a": [1, 2.5, null, true], "b": "x"}'), parsepson('nope', 'dflt'), parsepson('"s"', 'scalar')] }
$m = load_module_metadata('stdlib')
notify { 'load_module_metadata': message => [$m['name'], $m['source'], load_module_metadata('mymod', true)] }
