# openssl's cert_date_valid: the seconds a certificate stays valid (PEM,
# after other PEM blocks, or DER), false when expired, not yet valid or
# ending as it begins. The seconds change with the time: checked by range.
$dir = "${get_module_path('certfixtures')}/files"
['valid.pem', 'bundle.pem', 'valid.der'].each |$f| {
  $s = cert_date_valid("${dir}/${f}")
  $ok = $s =~ Integer and $s > 2900000000 and $s < 3200000000
  notify { "valid ${f}": message => "seconds left in range: ${ok}" }
}
['expired.pem', 'future.pem', 'inverted.pem'].each |$f| {
  notify { "invalid ${f}": message => String(cert_date_valid("${dir}/${f}")) }
}
