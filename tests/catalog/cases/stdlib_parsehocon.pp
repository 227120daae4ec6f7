# stdlib's parsehocon: HOCON text to a hash, as the hocon gem reads it.
$cases = [
  'a = 1',
  '{a: 1, b: [1, 2.5, "x", true, null, yes], c { d = foo bar  , e = 1 2 } }',
  'b = 2, a = 1, c.d.e = x, c.a = 2, b = 3',
  'a { x = 1 }, a { y = 2 }, a.z = 3',
  'a = {b = 1}, a = {c = 2}, x = 1, a { d = 3 }',
  'a.b.c = 1, a.b.d = 2, a.b = {e = 3}',
  'a = 1, a.b = 2',
  'a.b = 1, a = 2',
  'a { b = 1 }, a = null, a.c = 2',
  'a = [1], a += 2',
  'a += 1',
  'a = [1], a = ${a} [2], b = ${a}',
  'a = 1, b = ${a}, c = ${?nope}, d = "${a}", e = ${a}${a}, f = ${a} x, g = x ${a}, h = ${a}.5',
  'a = 1, a = ${?nope}',
  'a = x${?nope}y',
  'a = ${b.c}, b { c = 5 }',
  'a { b { c = ${a.d} }, d = 1 }',
  'a = {x = 1}, b = ${a} {y = 2}',
  'a = [1,2] [3], b = {x:1} {y:2}, c = [1 2]',
  'a = """x "y" z""", b = """two\nlines"""',
  "a = \"\\u00e9\\n\\t\\\\\\\"\", \"b.c\" = 1, b.c = 2",
  'a = 010, b = 08, c = -010, d = 1e3, e = 1.5e1, f = 1E2, h = 1e+2, i = 0.1e-1, j = 1.5x, k = 1.0',
  'a = .5, b = 5., c = -0, d = 1-2, e = 1.2.3, f = 0x10, g = 10 minutes',
  'a = true, b = false, c = yes, d = on, e = true false, f = null x',
  "a = foo // comment\n b = bar # another\n",
  "a = 1\n\n b = [\n1\n2\n]\n c = {\n x = 1\n y = 2 }",
  'a = {}, b = [], c = [[]], d = [ ], e = [{x:1},{y:2}]',
  'a b c = 1, "q" r = 2, "" = 3, "x.y".z = 4',
  'a = 1 , b = [ 1 , 2 , ] , ',
  '',
  '# only a comment',
]
$cases.each |$i, $c| {
  notify { "hocon ${i}": message => String(parsehocon($c)) }
}
notify { 'default on parse error': message => String(parsehocon('a = ', 'fallback')) }
notify { 'default on unresolved': message => String(parsehocon('a = ${nope}', {'x' => 1})) }
notify { 'undef default': message => String(parsehocon('{a: }', undef)) }
notify { 'default unused': message => String(parsehocon('a = 2', 'fallback')) }
