# defined_with_params sees only what is declared before it: a resource
# declared later, and one a defined type declares (its body runs after
# the main manifest), are not there yet; inside a class declared later
# the earlier resources are.
$before = defined_with_params(Notify['later'])
notify { 'later': message => 'l' }
$after = defined_with_params(Notify['later'])
define dwp_order_def { notify { "from ${title}": } }
dwp_order_def { 'd': }
$inner = defined_with_params(Notify['from d'])
class dwp_order_cls {
  notify { 'from class':
    message => "${defined_with_params(Notify['later'])} ${defined_with_params(Notify['from d'])} ${defined_with_params(Notify['last'])}",
  }
}
include dwp_order_cls
notify { 'order': message => "${before} ${after} ${inner}" }
notify { 'last': }
