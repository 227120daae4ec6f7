# stdlib::ip_in_range: IPAddr refuses zero-filled IPv4 numbers.
notify { 'x': message => String(stdlib::ip_in_range('010.0.0.1', '10.0.0.0/8')) }
