# validate_x509_rsa_key_pair takes exactly two arguments.
validate_x509_rsa_key_pair('cert')
