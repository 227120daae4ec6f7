# stdlib's intersection names the classes it was given.
notice(intersection('a', {}))
