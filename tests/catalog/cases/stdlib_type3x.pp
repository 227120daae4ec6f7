# stdlib's deprecated type3x: the 3.x type name of a value; a string
# that reads back as the same Integer or Float is that number's type;
# undef arrives as '' and a regexp as its source text (both strings).
$v = [
  type3x('1'), type3x('-12'), type3x('01'), type3x('-0'), type3x('+1'),
  type3x('1.5'), type3x('1.0'), type3x('1.50'), type3x('1e5'), type3x('100000.0'),
  type3x('1.0e+16'), type3x('abc'), type3x(''), type3x(' 1'),
  type3x(1), type3x(-3), type3x(1.5), type3x(1e20), type3x(true), type3x(false),
  type3x([]), type3x([1]), type3x({}), type3x({ 'a' => 1 }), type3x(undef), type3x(/a/),
]
notify { 'type3x': message => "${v}" }
