# openstacklib's inet6_prefix: IPv6 addresses as inet6:[ADDR] (what
# follows a bracketed address kept), other values as they are; one
# address in, one out.
$one = ['::1', '[fd00::1]:5000', 'fe80::1 6379', '10.0.0.1', 'inet6:[::1]', 'host.example.com', '::1/64', '']
$one.each |$i, $a| { notify { "one ${i}": message => String(inet6_prefix($a)) } }
notify { 'array': message => String(inet6_prefix(['2001:db8::2', '192.0.2.1', 5])) }
notify { 'single array': message => String(inet6_prefix(['::2'])) }
notify { 'none': message => String(inet6_prefix()) }
