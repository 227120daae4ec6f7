class defs {
  Notify { loglevel => 'warning' }
  mydef { 'a': }
}
define mydef ($msg = "default for ${title}") {
  notify { "mydef ${title}": message => $msg }
}
include defs
mydef { 'b': msg => 'explicit' }
