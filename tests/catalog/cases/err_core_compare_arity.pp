# compare with more than three arguments.
notice(compare('a', 'b', true, false))
