notify { 42: }
notify { 'mixed': message => 3.14 }
$t = ['t1', ['t2', 't3']]
notify { $t: }
