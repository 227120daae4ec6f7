# validate_email_address rejects an address without a domain.
validate_email_address('bob@localhost')
