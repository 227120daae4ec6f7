# stdlib's str2bool: its words, any case; a boolean passes; undef is ''
# (issue 14).
$words = ['1', 't', 'y', 'true', 'yes', 'TRUE', 'Yes', 'T', '0', 'f', 'n', 'false', 'no', 'NO', 'False', '', 'undef', 'undefined', "x\nyes", "no\n", "junk\n\nmore"]
$words.each |$w| {
  notify { "str2bool ${w.regsubst("\n", '\n', 'G')}": message => String(str2bool($w)) }
}
notify { 'bool': message => String(str2bool(true)) }
notify { 'bool-false': message => String(str2bool(false)) }
notify { 'undef': message => String(str2bool(undef)) }
