# stdlib::ip_in_range: an address IPAddr cannot read.
notify { 'x': message => String(stdlib::ip_in_range('foo', '10.0.0.0/8')) }
