# An EC-signed certificate and an RSA key: OpenSSL's error, unrescued.
include x509_fixtures
validate_x509_rsa_key_pair($x509_fixtures::ec_crt, $x509_fixtures::ca_key)
