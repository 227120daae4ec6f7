# stdlib::ip_in_range's range is a string or an array.
notify { 'x': message => String(stdlib::ip_in_range('10.0.0.1', 8)) }
