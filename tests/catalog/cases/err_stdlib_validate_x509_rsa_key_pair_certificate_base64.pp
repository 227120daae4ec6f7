# A certificate block that is not base64.
include x509_fixtures
validate_x509_rsa_key_pair(regsubst($x509_fixtures::ca_crt, 'MII', 'M!I'), $x509_fixtures::ca_key)
