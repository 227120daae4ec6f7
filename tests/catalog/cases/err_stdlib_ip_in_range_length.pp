# stdlib::ip_in_range: a prefix longer than the address.
notify { 'x': message => String(stdlib::ip_in_range('10.0.0.1', ['10.0.0.0/8', '10.0.0.0/33'])) }
