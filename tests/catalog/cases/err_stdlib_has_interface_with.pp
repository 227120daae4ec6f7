# stdlib's has_interface_with takes one or two arguments.
notice(has_interface_with())
