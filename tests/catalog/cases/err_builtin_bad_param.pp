file { "/x": foo => 1 }
