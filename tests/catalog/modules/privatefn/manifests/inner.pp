# Declares the private class and defined type from inside the module.
class privatefn::inner {
  include privatefn
  privatefn::def { 'x': }
  notify { 'inner ok': }
}
