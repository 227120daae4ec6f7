# index in a value that cannot be iterated.
notice(index(true, 1))
