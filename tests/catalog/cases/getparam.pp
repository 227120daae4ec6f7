# stdlib's getparam: a declared resource's parameter (by reference or by
# its string form), its title, '' for a missing parameter, a missing
# resource or an empty parameter name; a class's parameter.
class corpus_fn_cls ($p = 'from default') { }
include corpus_fn_cls
notify { 'src': message => 'hello', withpath => true }
@notify { 'virtual': message => 'not realized' }
$m = getparam(Notify['src'], 'message')
$w = getparam(Notify['src'], 'withpath')
$t = getparam(Notify['src'], 'title')
$missing = getparam(Notify['src'], 'loglevel')
$nores = getparam(Notify['nothing'], 'message')
$str = getparam('Notify[src]', 'message')
$empty = getparam(Notify['src'], '')
$virt = getparam(Notify['virtual'], 'message')
$cls = getparam(Class['corpus_fn_cls'], 'p')
notify { 'out':
  message => "${m}|${w}|${t}|${missing}|${nores}|${str}|${empty}|${virt}|${cls}|${getparam(Notify['src'], 'message') =~ String}",
}
