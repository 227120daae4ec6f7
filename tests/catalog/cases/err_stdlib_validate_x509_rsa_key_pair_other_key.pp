# A certificate signed by another key.
include x509_fixtures
validate_x509_rsa_key_pair($x509_fixtures::ca_crt, $x509_fixtures::leaf_key)
