$checks = [
  'a' =~ String, 1 =~ Integer[0, 5], 9 =~ Integer[0, 5], 1.5 =~ Float, 1 =~ Numeric,
  [1, 2] =~ Array[Integer], ['a', 1] =~ Array[Integer], { 'a' => 1 } =~ Hash[String, Integer],
  undef =~ Optional[String], 'x' =~ Enum['x', 'y'], 'abc' =~ Pattern[/^a/], 'q' =~ Variant[Integer, String],
  { 'k' => 'v' } =~ Struct[{ 'k' => String }], [1, 'a'] =~ Tuple[Integer, String], true =~ Boolean,
  '/etc' =~ Stdlib::Absolutepath, 'rel' =~ Stdlib::Absolutepath, 80 =~ Stdlib::Port, File['/x'] =~ Type[Resource],
  'abc' =~ String[1, 2], undef =~ Undef, 'x' =~ Any, 'x' =~ Data,
]
notify { 'types': message => $checks }
