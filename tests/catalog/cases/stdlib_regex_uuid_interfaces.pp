# stdlib's delete_regex (whole-word matches of elements and hash keys),
# fqdn_uuid (version 5 UUIDs in the DNS namespace) and the interface fact
# tests, which are false when the legacy `interfaces` fact is absent as in
# this case's facts (issue 14).
notify { 'delete_regex': message => [delete_regex(['a', 'b', 'c', 'b'], 'b'), delete_regex(['a', 'b', 'c'], ['b', 'c']), delete_regex({ 'a' => 1, 'b' => 2, 'c' => 3 }, '^a$'), delete_regex(['abc', 'ab c', 'x'], 'ab'), delete_regex([], 'x')] }
notify { 'fqdn_uuid': message => [fqdn_uuid('puppetlabs.com'), fqdn_uuid('google.com'), fqdn_uuid('')] }
notify { 'has_interface_with': message => [has_interface_with('lo'), has_interface_with('ipaddress', '10.0.0.5'), has_ip_address('10.0.0.5'), has_ip_network('10.0.0.0')] }
