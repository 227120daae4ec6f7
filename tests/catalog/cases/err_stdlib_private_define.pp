# private() refuses a declaration from outside the module: define.
privatefn::def { 'y': }
