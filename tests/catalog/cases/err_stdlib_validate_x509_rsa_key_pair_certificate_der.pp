# A certificate block whose content is not a certificate.
include x509_fixtures
validate_x509_rsa_key_pair("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", $x509_fixtures::ca_key)
