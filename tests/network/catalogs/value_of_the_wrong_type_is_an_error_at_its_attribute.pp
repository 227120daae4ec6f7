network_route { '10.9.0.0/24':
  gateway => '10.0.21.2',
  ensure  => running,
}
