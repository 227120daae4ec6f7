# stdlib::ip_in_range: an IPv6 mask on an IPv4 range.
notify { 'x': message => String(stdlib::ip_in_range('10.0.0.1', '10.0.0.0/ffff::')) }
