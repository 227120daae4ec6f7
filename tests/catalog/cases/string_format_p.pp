# String($x, '%p'): Puppet's quoting of each kind of value.
$vals = ['abc', "it's", 'say "hi"', "tab\there", "nl\nx", 'back\\slash', "uni é", "\u0001", '', 1, 1.5, true, undef, [1, 'a'], {'k' => 'v'}, /re/, Integer, 'a$b', "dollar \$x", "esc \e", "both ' and \"", "cr\r", "del\u007f"]
$vals.each |$i, $v| { notify { "p${i}": message => String($v, '%p') } }
notify { 'width': message => String('abc', '%10p') }
notify { 'left': message => String('abc', '%-10p') }
notify { 'prec': message => String('abcdef', '%.3p') }
notify { 'array': message => String(['a', "b'c"], '%p') }
notify { 'hash': message => String({ 'k' => ["x\ty"] }, '%p') }
notify { 'alt': message => String("a'b", '%#p') }
notify { 'trailing': message => String('x\\', '%p') }
notify { 'plain-array': message => String(['a', "b'c", "d\\e", "t\tx"]) }
