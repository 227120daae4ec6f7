# validate_ip_address rejects an octet over 255.
validate_ip_address('1.2.3.256')
