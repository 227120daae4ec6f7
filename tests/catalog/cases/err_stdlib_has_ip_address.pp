# stdlib's has_ip_address takes exactly one address.
notice(has_ip_address('1.2.3.4', 'x'))
