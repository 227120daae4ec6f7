# A parameter given as undef that has no default: the type refuses undef
# with its own message (apache::listen passes concat::fragment's target).
define frag(String $target) {}
$nothing = undef
frag { 'x': target => $nothing }
