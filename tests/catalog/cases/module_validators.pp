# Validation functions ported natively: stdlib's validate_absolute_path and
# is_absolute_path, neutron's range validators, with values they accept.
validate_absolute_path('/etc', ['/var/lib', 'C:/Windows'])
$a = is_absolute_path('/x')
$b = is_absolute_path('x/y')
$c = is_absolute_path(undef)
validate_network_vlan_ranges(['physnet1:100:200', 'physnet2', 'physnet3:5', '1:4094'])
validate_network_vlan_ranges('physnet1')
validate_tunnel_id_ranges(['1:1000', '5:5'])
validate_vni_ranges('1:16777215')
validate_vxlan_udp_port(4789)
validate_vxlan_udp_port('60000')
notify { 'validators': message => "${a} ${b} ${c}" }
