# compare's third argument only with strings.
notice(compare(1, 2, true))
