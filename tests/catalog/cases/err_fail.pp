if $facts['os']['family'] == 'Debian' {
  fail("unsupported: ${facts['os']['family']}")
}
