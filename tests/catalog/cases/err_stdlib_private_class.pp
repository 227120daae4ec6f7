# private() refuses a declaration from outside the module: class.
include privatefn
