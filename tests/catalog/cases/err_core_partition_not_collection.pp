# partition of an integer.
notice(partition(3) |$x| { $x })
