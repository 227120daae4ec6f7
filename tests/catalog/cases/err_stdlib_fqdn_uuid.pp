# stdlib's fqdn_uuid takes one name.
notice(fqdn_uuid('a', 'b'))
