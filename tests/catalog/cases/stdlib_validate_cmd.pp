# stdlib's validate_cmd: checkers that accept the content (path appended, or at a lone %, a shell only for shell characters).
validate_cmd("hello\n", '/bin/grep -q hello')
validate_cmd("a=1\n", 'grep -qx a=1 %')
validate_cmd("x\n", 'test -s % && test -z "$HOME" && test "$LANG" = C')
validate_cmd('private', 'find % -perm 600 | grep -q .')
validate_cmd(undef, 'test ! -s')
notify { 'validate_cmd': message => 'all passed' }
