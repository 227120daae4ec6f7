# compare's third argument must be a Boolean.
notice(compare('a', 'b', 'yes'))
