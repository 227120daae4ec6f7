define dd ($a = 1) {}
dd { 'x': b => 2 }
