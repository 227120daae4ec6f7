Bgp_neighbor {
  asn => 'sixty-five',
}
bgp_neighbor { '10.0.21.2':
  remote_as => 65002,
}
