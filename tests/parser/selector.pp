$pkg = $os ? {
  'Debian' => 'apache2',
  default  => 'httpd',
}
