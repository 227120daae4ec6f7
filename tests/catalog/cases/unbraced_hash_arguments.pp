# Hash entries without braces as the last (or any) argument: adjacent
# `key => value` entries make one hash, keywords may be keys and values.
create_resources('notify', 'from_pairs' => { 'message' => 'one' }, 'second' => {})
$merged = { 'a' => 1 }.merge(b => 2, type => function)
$list = [x => 1, 'y', function]
$parts = String(a => 1, 'b' => [2])
notify { 'merged': message => $merged }
notify { 'list': message => $list }
notify { 'parts': message => $parts }
notify { 'struct': message => String(Struct[name => String, other => Optional[Integer]]) }
notify { 'with_lambda':
  message => [1, 2].reduce(sum => 0) |$memo, $v| { $memo + { "v${v}" => $v } },
}
