# stdlib's enclose_ipv6 wants a string or an array.
notice(enclose_ipv6(3))
