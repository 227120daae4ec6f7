$x.merge(a => 1,)
