# group_by of a string.
notice(group_by('abc') |$x| { $x })
