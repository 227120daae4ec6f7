# stdlib's string and array helpers (issue 14): swapcase, squeeze,
# unix2dos, uriescape, shell_escape, shell_join, start_with/end_with,
# extname, union, type_of and validate_slength, with normal and edge values.
notify { 'swapcase': message => swapcase('aBcD ÄöX 1') }
notify { 'swapcase-array': message => String(swapcase(['aB', 1, 'Cd'])) }
notify { 'squeeze': message => squeeze('aaabbbccc  dd') }
notify { 'squeeze-set': message => squeeze('aaabbbccc  dd', 'a-b') }
notify { 'squeeze-neg': message => squeeze('aaabbbccc  dd', '^a') }
notify { 'squeeze-array': message => String(squeeze(['xxyy', 'zz'], 'y')) }
notify { 'unix2dos': message => String(unix2dos("a\nb\r\nc\r\r\nd")) }
notify { 'uriescape': message => uriescape('http://x.org/a b?q=ü&r=[1]#f%') }
notify { 'uriescape-array': message => String(uriescape(['a b', 3])) }
notify { 'shell_escape': message => shell_escape("it's a \$x\nline") }
notify { 'shell_escape-empty': message => shell_escape('') }
notify { 'shell_escape-int': message => shell_escape(42) }
notify { 'shell_join': message => shell_join(['a b', '', 'c;d', 1]) }
notify { 'start_with': message => String(stdlib::start_with('foobar', 'foo')) }
notify { 'start_with-array': message => String(stdlib::start_with('foobar', ['x', 'fo'])) }
notify { 'end_with': message => String(stdlib::end_with('foobar', ['baz', 'bar'])) }
notify { 'end_with-no': message => String(stdlib::end_with('foobar', 'foo')) }
notify { 'extname': message => stdlib::extname('/a/b.tar.gz') }
notify { 'extname-dot': message => "[${stdlib::extname('.bashrc')}]" }
notify { 'union': message => String(union(['a', 'b', 'c'], ['b', 'c', 'd'], [1, 'a'])) }
notify { 'union-empty': message => String(union([], [])) }
notify { 'type_of': message => String(type_of([1, 'a'])) }
notify { 'type_of-int': message => String(type_of(3)) }
notify { 'slength': message => String(validate_slength('abc', 3)) }
notify { 'slength-array': message => String(validate_slength(['a', 'bcd'], '4', 1)) }
notify { 'slength-float': message => String(validate_slength('abcd', 4.7)) }
