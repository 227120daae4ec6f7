# Each argument must be a string (shown as Ruby inspects it).
include x509_fixtures
validate_x509_rsa_key_pair($x509_fixtures::ca_crt, ['key'])
