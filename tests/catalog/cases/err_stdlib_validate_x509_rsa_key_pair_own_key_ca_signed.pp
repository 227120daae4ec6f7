# A CA-signed certificate does not verify with its own key: the check is
# the signature, not the public key in the certificate.
include x509_fixtures
validate_x509_rsa_key_pair($x509_fixtures::leaf_crt, $x509_fixtures::leaf_key)
