# private() refuses a declaration from outside the module: message.
include privatefn::msg
