$a = 'x'
$h = { 'k' => 'v', 'n' => 3 }
$arr = [1, 'two', 3.5]
notify { 'i1': message => "a=${a} h=${h['k']} n=${h['n']} arr=${arr[1]}" }
notify { 'i2': message => "math ${1 + 2 * 3} and $a and \$a and \t tab" }
notify { 'i3': message => "array ${arr} hash ${h}" }
notify { 'i4': message => 'single $a ${a} \n' }
notify { 'i5': message => "unicode \u00e9 and \u{1F600}" }
