# cert_date_valid on a file that holds no certificate.
$dir = "${get_module_path('certfixtures')}/files"
$s = cert_date_valid("${dir}/not_a_cert.txt")
