# A certificate block without its END line.
include x509_fixtures
validate_x509_rsa_key_pair(regsubst($x509_fixtures::ca_crt, '-----END CERTIFICATE-----', ''), $x509_fixtures::ca_key)
