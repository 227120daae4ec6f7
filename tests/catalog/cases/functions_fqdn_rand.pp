# fqdn_rand and stdlib's fqdn_rotate and fqdn_rand_string: Ruby's MT19937
# seeded with the MD5 of the node's fqdn and the arguments.
$a = fqdn_rand(60, 'gitolite')
$b = fqdn_rand(4, 'gitolite')
$c = fqdn_rand(30)
$d = fqdn_rand('1000', 'x', true)
$e = fqdn_rand(4294967296, 'big')
$f = fqdn_rotate(['a', 'b', 'c', 'd', 'e'])
$g = fqdn_rotate('abcdefg')
$h = fqdn_rotate(['one', 'two', 'three'], 'seed')
$i = fqdn_rand_string(12)
$j = fqdn_rand_string(8, 'abc', 'salt')
notify { 'fqdn': message => "${a} ${b} ${c} ${d} ${e} ${f} ${g} ${h} ${i} ${j}" }
