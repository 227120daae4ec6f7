# compare of values no ordering exists for.
notice(compare([1], [2]))
