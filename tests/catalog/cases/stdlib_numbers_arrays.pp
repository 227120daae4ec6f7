# stdlib's pure helpers (issue 14): Puppet 7's core floor, ceiling, round
# and camelcase (they win over stdlib's 3.x copies), stdlib's num2bool,
# any2bool, dos2unix, regexpescape, difference, intersection,
# join_keys_to_values, delete_values, clamp and is_float.
notify { 'floor': message => [floor(3.7), floor(-3.2), floor(4), floor('2.9'), floor(' -1.5 ')] }
notify { 'ceiling': message => [ceiling(3.2), ceiling(-3.7), ceiling(4), ceiling('2.1')] }
notify { 'round': message => [round(2.5), round(2.4), round(-2.5), round(-2.4), round(7), round(0.0)] }
notify { 'camelcase': message => [camelcase('foo_bar_baz'), camelcase('FOO_bAR'), camelcase('_x__y_'), camelcase(['a_b', 'cC_dD']), camelcase(42)] }
notify { 'num2bool': message => [num2bool(1), num2bool(0), num2bool(-1), num2bool('2'), num2bool('0.5'), num2bool(1.5), num2bool('1e3'), num2bool(true), num2bool([1])] }
notify { 'any2bool': message => [any2bool(true), any2bool(false), any2bool(undef), any2bool('yes'), any2bool('N'), any2bool('T'), any2bool(''), any2bool('undef'), any2bool('1.5'), any2bool('-3'), any2bool(0), any2bool(2), any2bool([]), any2bool({})] }
notify { 'dos2unix': message => [dos2unix("a\r\nb\r\n"), dos2unix("x\ry\n")] }
notify { 'regexpescape': message => [regexpescape('a.b*c(d)[e]{f}|g^h$i?j+k\\l m#n-o'), regexpescape(['x.y', 1, "t\tn\n"])] }
notify { 'difference': message => [difference(['a', 'b', 'c', 'b'], ['b', 'd']), difference(['A', 1, 2], ['a', 1.0]), difference([], [1])] }
notify { 'intersection': message => [intersection(['a', 'b', 'c', 'b'], ['b', 'c', 'd']), intersection(['A', 1], ['a', 1]), intersection([1, 2], [])] }
notify { 'join_keys_to_values': message => [join_keys_to_values({ 'a' => 1, 'b' => [2, 3], 'c' => 'undef', 'd' => 1.5, 'e' => true }, ' is '), join_keys_to_values({}, '=')] }
notify { 'delete_values': message => [delete_values({ 'a' => 'A', 'b' => 'B', 'c' => 'b', 'd' => 1 }, 'B'), delete_values({ 'a' => 1, 'b' => 2 }, 1), delete_values({ 'a' => 1, 'b' => 2.0 }, 2)] }
notify { 'clamp': message => [clamp('24', [575, 187]), clamp(16, 88, 661), clamp([4, 3, '99']), clamp(5.7, 1, 10), clamp(-3, 0, 9)] }
notify { 'is_float': message => [is_float(1.5), is_float(1), is_float('1.5'), is_float('1.50'), is_float('1'), is_float('abc'), is_float('0.0'), is_float([1.5]), is_float(undef)] }
