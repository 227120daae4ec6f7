# compare of values of different comparable types.
notice(compare(1, 'a'))
