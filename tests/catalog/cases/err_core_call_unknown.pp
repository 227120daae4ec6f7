# call of a function that does not exist.
notice(call('no_such_function', 1))
