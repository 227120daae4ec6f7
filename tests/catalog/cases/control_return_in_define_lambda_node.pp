define d() {
  notify { "d-before": }
  return()
  notify { "d-after": }
}
d { "x": }
class c {
  [1, 2].each |$x| {
    notify { "c${x}": }
    if $x == 1 { return() }
  }
  notify { "c-after": }
}
include c
node default {
  notify { "n-before": }
  return()
  notify { "n-after": }
}
