# stdlib's validate_x509_rsa_key_pair: the certificate's signature must
# verify with the RSA key (OpenSSL's X509#verify), in every form
# OpenSSL::PKey::RSA.new reads; PEM blocks are found past other text.
include x509_fixtures
$crlf = regsubst($x509_fixtures::ca_crt, "\n", "\r\n", 'G')
$relabelled = regsubst(regsubst($x509_fixtures::ca_crt, 'BEGIN CERTIFICATE', 'BEGIN X509 CERTIFICATE'), 'END CERTIFICATE', 'END X509 CERTIFICATE')
$pkcs8_as_pkcs1 = regsubst($x509_fixtures::ca_key, 'PRIVATE KEY', 'RSA PRIVATE KEY', 'G')
$pairs = {
  'pkcs8 key'           => [$x509_fixtures::ca_crt, $x509_fixtures::ca_key],
  'pkcs1 key'           => [$x509_fixtures::ca_crt, $x509_fixtures::ca_pkcs1_key],
  'public key'          => [$x509_fixtures::ca_crt, $x509_fixtures::ca_pub],
  'signed by the CA'    => [$x509_fixtures::leaf_crt, $x509_fixtures::ca_key],
  'sha1'                => [$x509_fixtures::sha1_crt, $x509_fixtures::ca_key],
  'sha512'              => [$x509_fixtures::sha512_crt, $x509_fixtures::ca_key],
  'rsassa-pss'          => [$x509_fixtures::pss_crt, $x509_fixtures::ca_key],
  'text around'         => ["junk\n${x509_fixtures::ca_crt}trailing", "junk\n${x509_fixtures::ca_key}x"],
  'first certificate'   => ["${x509_fixtures::ca_crt}${x509_fixtures::leaf_crt}", $x509_fixtures::ca_key],
  'certificate in key'  => [$x509_fixtures::ca_crt, "${x509_fixtures::ca_crt}${x509_fixtures::ca_key}"],
  'crlf'                => [$crlf, $x509_fixtures::ca_key],
  'x509 label'          => [$relabelled, $x509_fixtures::ca_key],
  'pkcs8 as pkcs1 label' => [$x509_fixtures::ca_crt, $pkcs8_as_pkcs1],
}
$pairs.each |$what, $pair| {
  $result = validate_x509_rsa_key_pair($pair[0], $pair[1])
  notify { "x509 ${what}": message => String($result) }
}
