case $facts["os"]["family"] {
  'Debian', 'Ubuntu': { $pkg = 'apache2' }
  /^Red/: { $pkg = "httpd" }
  default: { fail("unsupported") }
}
