# An EC key in SEC1's form is not RSA either.
include x509_fixtures
validate_x509_rsa_key_pair($x509_fixtures::ca_crt, $x509_fixtures::ec_sec1_key)
