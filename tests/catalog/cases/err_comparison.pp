if 'a' < 1 { notify { 'x': } }
