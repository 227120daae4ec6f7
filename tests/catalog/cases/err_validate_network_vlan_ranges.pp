# neutron's validate_network_vlan_ranges refuses an id above 4094.
validate_network_vlan_ranges(['physnet1:100:5000'])
