# stdlib's to_bytes: numbers pass through (a Float stays one), strings
# become Integers (issue 14).
$v = [1.5, '1.5', '1.5k', '0.1k', 2048, '1e3', '1.5 M', 1e20, '3.7', '-2k', '5b', '1.0', '1.5.5k', '.5k', '1e', '', 0.1, 2.5e-7, 100.0, '1E3k', '+3k', '1.5e+2M']
$v.each |$i, $x| {
  $r = to_bytes($x)
  $kind = $r ? { Float => 'Float', Integer => 'Integer', default => 'other' }
  notify { "to_bytes ${i}": message => "${x} => ${r} ${kind}" }
}
notify { 'sum': message => String(to_bytes(1.5) + 1) }
notify { 'string-float': message => String(to_bytes(1.5)) }
notify { 'string-big': message => String(to_bytes(1e20)) }
notify { 'string-floats': message => [String(2.5), String(0.1), String(1.0), String(-3.25), String([1.5]), String({ 'a' => 0.5 })] }
