# archive's assemble_nexus_url (a query string escaped as Ruby's CGI.escape
# escapes it) and stdlib's parseyaml (data, or the default when the text
# holds nothing) natively.
$url = assemble_nexus_url('https://nexus.example.com', {
  'g' => 'com.example', 'a' => 'my app', 'v' => '1.0+b/2', 'r' => 'a~b_c.d-e',
})
$data = parseyaml("---\nname: x\nlist:\n  - 1\n  - two\nflag: true\n")
$empty = parseyaml('', 'fallback')
file { '/tmp/functions_nexus_parseyaml':
  content => "${url}\n${data}\n${empty}\n",
}
