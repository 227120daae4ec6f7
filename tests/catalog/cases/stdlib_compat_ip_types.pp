# stdlib's Stdlib::Compat::Ipv4/Ipv6/Ip_address use look-ahead; the
# aliases match as Ruby matches them.
$a = '192.0.2.1' =~ Stdlib::Compat::Ip_address
$b = '192.0.2.256' =~ Stdlib::Compat::Ipv4
$c = '2001:db8::1' =~ Stdlib::Compat::Ipv6
$d = '10.0.0.1/24' =~ Stdlib::Compat::Ipv4
$e = 'x' =~ Stdlib::Compat::Ip_address
notify { 'ip': message => "${a} ${b} ${c} ${d} ${e}" }
