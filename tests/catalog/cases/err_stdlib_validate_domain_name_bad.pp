# validate_domain_name rejects a label ending in a hyphen.
validate_domain_name('example.com', 'foo-.example.com')
