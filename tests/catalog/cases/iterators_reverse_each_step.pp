# reverse_each and step: Iterator values, consumed by other functions, converted by Array() and String(), with and without lambdas.
$a = [1, 2, 3, 4, 5]
notify { 'r1': message => $a.reverse_each.map |$x| { $x * 2 } }
notify { 'r2': message => String($a.reverse_each) }
notify { 'r3': message => Array($a.reverse_each) }
notify { 'r4': message => $a.step(2).map |$x| { $x } }
notify { 'r5': message => $a.reverse_each |$x| { $x } }
notify { 'r6': message => $a.step(2) |$x| { $x } }
notify { 'r7': message => {'a' => 1, 'b' => 2}.reverse_each.map |$x| { $x } }
notify { 'r8': message => 5.reverse_each.map |$x| { $x } }
notify { 'r9': message => 'abc'.reverse_each.map |$x| { $x } }
notify { 'r11': message => Integer[1, 10].step(3).map |$x| { $x } }
notify { 'r12': message => $a.reverse_each =~ Iterator }
notify { 'r13': message => $a.step(2).reverse_each.map |$x| { $x } }
notify { 'r14': message => "${a.reverse_each}" }
notify { 'r15': message => $a.step(2).filter |$x| { $x > 1 } }
notify { 'r16': message => $a.reverse_each.reduce |$m, $x| { $m + $x } }
notify { 'r17': message => 3.step(2) |$x| { $x } }
