# regsubst's target must be an Array or a String.
$x = regsubst(undef, 'a', 'b')
