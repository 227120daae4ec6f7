# Module Ruby functions ported natively: openstacklib's
# normalize_ip_for_uri, mcollective's mco_array_to_string, neutron's
# convert_to_json_string, stdlib's is_ip_address (memcached::max_memory
# needs a memorysize fact: the Debian corpus covers it).
$ip = normalize_ip_for_uri(['192.0.2.1', '2001:db8::1', '[::1]'])
$ip1 = normalize_ip_for_uri('2001:db8::2')
$mco = mco_array_to_string([1, 'a', true])
$js = convert_to_json_string(['b:2', 'a:1'])
$js2 = convert_to_json_string('plain')
$ipv = [is_ip_address('10.0.0.1'), is_ip_address('10.0.0.1/24'), is_ip_address('fe80::1'), is_ip_address('x')]
notify { 'natives': message => "${ip} ${ip1} ${mco} ${js} ${js2} ${ipv}" }
