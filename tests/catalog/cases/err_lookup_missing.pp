$v = lookup('definitely_missing_key')
