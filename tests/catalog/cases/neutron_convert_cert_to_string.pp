# neutron's convert_cert_to_string: the base64 lines of a PEM file joined
# (every line with ----- left out, each stripped).
$dir = "${get_module_path('certfixtures')}/files"
['valid.pem', 'bundle.pem', 'not_a_cert.txt'].each |$f| {
  notify { $f: message => convert_cert_to_string("${dir}/${f}") }
}
