# scanf() whitespace rules: %c reads a blank unless the format has
# whitespace before it, %[set] never skips, literals skip input blanks,
# and a float that is a bare integer stops before an exponent.
notify { 'c': message => String(scanf('a b', '%c%c%c')) }
notify { 'space c': message => String(scanf('a  b', '%c %c')) }
notify { 'set no skip': message => String(scanf('  ab', '%[ab]')) }
notify { 'literal skip': message => String(scanf('1  ,2', '%d,%d')) }
notify { 'float forms': message => String(scanf('5 2.5e2 7.', '%f %f %f')) }
notify { 'hex i': message => String(scanf('-0x10 010', '%i %i')) }
notify { 'empty': message => String(scanf('', '%d')) }
