# file(): module-relative references read <module>/files/..., absolute
# paths are read as they are, the first existing of several wins, line
# endings are preserved.
notify { 'module': message => file('filefns/hello.txt') }
notify { 'nested': message => file('filefns/sub/nested.txt') }
notify { 'first existing': message => file('filefns/missing.txt', 'nomodule/x.txt', 'filefns/sub/nested.txt', 'filefns/hello.txt') }
notify { 'crlf': message => String(file('filefns/crlf.txt').split("\r\n")) }
notify { 'absolute': message => file('/etc/hostname', 'filefns/hello.txt').size > 0 }
notify { 'missing absolute skipped': message => file('/nonexistent/ferry/x', 'filefns/hello.txt') }
