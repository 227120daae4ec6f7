# An apply block for a device: compiled with the device types built in and
# converged through the device's CLI.
plan netdev::apply_route(TargetSpec $targets) {
  $results = apply($targets) {
    network_route { '10.207.0.0/24':
      gateway => '10.0.21.1',
      metric  => 40,
    }
  }
  return $results.first.report['status']
}
