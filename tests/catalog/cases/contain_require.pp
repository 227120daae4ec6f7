class inner1 { notify { 'i1': } }
class inner2 { notify { 'i2': } }
class outer1 {
  contain inner1
  require inner2
}
include outer1
