# private() refuses a declaration from outside the module: undef_message.
include privatefn::undefmsg
