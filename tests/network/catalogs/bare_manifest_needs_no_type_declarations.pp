# The device types are built in: no module declares them.
device_config { 'eth2 address':
  content => "interface eth2\n ip address 10.0.21.1/30\n",
}
network_interface { 'eth2':
  description => 'link to r2',
  enable      => true,
}
network_route { '10.201.0.0/24':
  gateway => '10.0.21.2',
  metric  => 20,
  tag     => ['routes'],
}
bgp_neighbor { '10.0.21.2':
  asn       => 65001,
  remote_as => 65002,
  require   => Device_config['eth2 address'],
}
