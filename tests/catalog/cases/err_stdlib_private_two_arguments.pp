# private() refuses a declaration from outside the module: two_arguments.
include privatefn::two
