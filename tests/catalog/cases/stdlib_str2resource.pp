# stdlib::str2resource: a 'Type[title]' string (any case of the type) to
# the reference of a resource declared before it, virtual ones and
# classes included; usable in relationships and metaparameters.
notify { 'a': message => 'm' }
class s2r_cls { }
include s2r_cls
@notify { 'virt': }
$r = stdlib::str2resource('Notify[a]')
$c = stdlib::str2resource('class[s2r_cls]')
$v = stdlib::str2resource('Notify[virt]')
$l = stdlib::str2resource('notify[a]')
notify { 'b': message => "${r} ${c} ${v} ${l} ${String($r)} ${$r =~ Notify}", require => $r }
notify { 'c': before => stdlib::str2resource('Notify[b]') }
Notify['a'] -> stdlib::str2resource('Notify[c]')
