network_interface { 'eth2':
  description => 'link to r2',
    speed     => '10g',
}
