# ironic's ipv6_normalize_dnsmasq_ip_subnets: IPv6 netmasks as prefix
# lengths, IPv6 gateways removed, anything else kept.
$s = ipv6_normalize_dnsmasq_ip_subnets([
  { 'ip_range' => '10.0.0.10,10.0.0.100', 'netmask' => '255.255.255.0', 'gateway' => '10.0.0.1' },
  { 'ip_range' => 'fd00::10,fd00::100', 'netmask' => 'ffff:ffff:ffff:ffff::', 'gateway' => 'fd00::1', 'tag' => 't' },
  { 'netmask' => 'ffff:ffff::/16' },
  { 'netmask' => 'not-an-address', 'gateway' => 'neither' },
  { 'netmask' => 64, 'gateway' => '[fe80::1]' },
  { 'tag' => 'none' },
  'text',
])
$s.each |$i, $x| { notify { "subnet ${i}": message => String($x) } }
notify { 'empty': message => String(ipv6_normalize_dnsmasq_ip_subnets([])) }
