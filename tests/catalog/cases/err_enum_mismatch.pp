define e (Enum['a', 'b'] $mode) {}
e { 'x': mode => 'c' }
