class { 'ntp':
  servers        => ['0.pool.example.org', '1.pool.example.org'],
  restrict       => ['127.0.0.1'],
  service_ensure => 'stopped',
  iburst_enable  => true,
}
