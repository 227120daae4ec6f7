# cert_date_valid on a missing file.
$s = cert_date_valid('/nonexistent/cert.pem')
