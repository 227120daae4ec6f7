# convert_cert_to_string on a missing file (or a directory).
$s = convert_cert_to_string('/tmp')
