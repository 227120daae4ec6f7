# A line the device rejects fails its resource alone.
device_config { 'bogus neighbor':
  content => "router bgp 65001\n neighbor bogus\n",
}

network_route { '10.99.0.0/24':
  gateway => '10.0.21.2',
}
