# validate_domain_name takes strings.
validate_domain_name(['example.com'])
