# convert_to: new of a type with extra arguments, and a lambda receiving
# the converted value.
$r = [
  '42'.convert_to(Integer),
  '10'.convert_to(Integer, 2),
  '3.5'.convert_to(Float),
  42.convert_to(String),
  [1, 2].convert_to(Hash),
  convert_to('12', Integer) |$x| { $x * 2 },
  'true'.convert_to(Boolean),
  [[1, 2]].convert_to(Hash),
]
notify { 'convert_to': message => String($r) }
