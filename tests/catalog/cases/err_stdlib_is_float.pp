# stdlib's is_float takes exactly one argument.
notice(is_float(1, 2))
