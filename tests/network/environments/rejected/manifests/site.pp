# A line the device rejects fails its resource; what does not depend on it
# converges all the same.
device_config { 'bogus neighbor':
  content => "router bgp 65001\n neighbor bogus\n",
}

network_route { '10.99.0.0/24':
  gateway => '10.0.21.2',
}

# Skipped: what it requires failed.
network_route { '10.98.0.0/24':
  gateway => '10.0.21.2',
  require => Device_config['bogus neighbor'],
}
