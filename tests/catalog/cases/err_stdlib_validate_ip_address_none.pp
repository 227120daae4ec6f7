# validate_ip_address needs an argument.
validate_ip_address()
