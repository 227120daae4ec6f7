file {
  default: mode => '0600';
  '/x': ensure => file;
  '/y': * => $attrs;
}
