# index of a string without a second argument or block.
notice(index('abc'))
