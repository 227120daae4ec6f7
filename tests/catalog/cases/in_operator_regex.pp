$r = [/^b/ in ['a', 'bc'], 'x' in [], /z/ in 'xyz', 'A' in ['a'], Integer in [1, 'a'], 'k' in { 'K' => 1 }]
notify { 'in': message => $r }
