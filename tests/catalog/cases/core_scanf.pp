# scanf(): Ruby's String#scanf conversions, widths, skipped fields,
# literal text, stopping at the first mismatch, and the block form.
notify { 'int': message => String('42'.scanf('%i')) }
notify { 'ints': message => String(scanf('12 -34 +5', '%d %d %d')) }
notify { 'radix': message => String(scanf('0x1f 017 ff 17', '%i %i %x %o')) }
notify { 'float': message => String(scanf('3.25 -1e3 .5', '%f %e %g')) }
notify { 'string': message => String(scanf('hello world', '%s %s')) }
notify { 'chars': message => String(scanf('abcdef', '%3c%c')) }
notify { 'width': message => String(scanf('123456', '%2d%3d')) }
notify { 'skip': message => String(scanf('a=1 b=2', 'a=%*d b=%d')) }
notify { 'set': message => String(scanf('key: value', '%[a-z]: %[^x]')) }
notify { 'stop': message => String(scanf('10 apples', '%d %d')) }
notify { 'none': message => String(scanf('abc', '%d')) }
notify { 'literal mismatch': message => String(scanf('x=1', 'y=%d')) }
notify { 'percent': message => String(scanf('50% off', '%d%% %s')) }
notify { 'block': message => '42'.scanf('%i') |$x| { $x[0] + 1 } }
