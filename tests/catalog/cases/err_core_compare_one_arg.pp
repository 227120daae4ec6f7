# compare with a single argument.
notice(compare('a'))
