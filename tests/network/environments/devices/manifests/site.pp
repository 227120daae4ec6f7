# Both routers' side of their second link (eth2): its address, its
# description, a static route through the peer and the BGP session to it.
$me = $trusted['certname']
$peer_asn = $me ? { 'r1' => 65002, default => 65001 }
$my_asn = $me ? { 'r1' => 65001, default => 65002 }
$address = $me ? { 'r1' => '10.0.21.1', default => '10.0.21.2' }
$peer = $me ? { 'r1' => '10.0.21.2', default => '10.0.21.1' }

device_config { 'eth2 address':
  content => "interface eth2\n ip address ${address}/30\n",
}

network_interface { 'eth2':
  description => "ferry catalog: link to ${peer}",
  enable      => true,
}

network_route { "10.${$my_asn % 100 + 200}.0.0/24":
  gateway => $peer,
  metric  => '20',
}

bgp_neighbor { $peer:
  asn         => $my_asn,
  remote_as   => $peer_asn,
  description => 'from a catalog',
  require     => Device_config['eth2 address'],
}
