# file() with no existing file lists every argument.
notify { 'x': message => file('filefns/missing.txt', 'nomodule/x.txt', '/nonexistent/y') }
