# comment
/* block
   comment */
notify { 'semi': message => 'x'; 'two': message => 'y', }
$empty = {}
$trailing = [1, 2, 3,]
notify { 'misc': message => [$empty, $trailing, 0x1F, 017, 1e3, -5] }
