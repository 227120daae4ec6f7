# undef is '' to a 3.x function: no PEM certificate in it.
include x509_fixtures
validate_x509_rsa_key_pair(undef, $x509_fixtures::ca_key)
