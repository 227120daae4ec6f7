# A key is not a certificate (other PEM blocks are skipped).
include x509_fixtures
validate_x509_rsa_key_pair($x509_fixtures::ca_key, $x509_fixtures::ca_crt)
