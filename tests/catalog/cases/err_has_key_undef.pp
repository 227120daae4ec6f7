# has_key on undef: a 3.x function gets ''.
$h = undef
if has_key($h, 'x') { notify { 'no': } }
