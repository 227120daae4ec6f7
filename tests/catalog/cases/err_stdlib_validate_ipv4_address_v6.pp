# validate_ipv4_address rejects an IPv6 address.
validate_ipv4_address('1.2.3.4', '::1')
