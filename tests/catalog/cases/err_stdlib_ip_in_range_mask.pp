# stdlib::ip_in_range: a mask with holes.
notify { 'x': message => String(stdlib::ip_in_range('10.0.0.1', '10.0.0.0/255.0.255.0')) }
