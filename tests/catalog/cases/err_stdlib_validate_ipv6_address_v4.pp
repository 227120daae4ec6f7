# validate_ipv6_address rejects an IPv4 address.
validate_ipv6_address('1.2.3.4')
