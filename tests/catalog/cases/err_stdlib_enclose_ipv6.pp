# stdlib's enclose_ipv6 fails on a value that is no address.
notice(enclose_ipv6(['::1', 'host.example']))
