# Native ports of two module Ruby functions: ssh's ipaddresses() (the
# addresses of the interfaces named in the legacy `interfaces` fact, except
# those containing "lo") and monit's monit_validate_tests (checks each test
# and writes its monit `condition`).
$interfaces = 'eth0,lo,eth1'
$ipaddress_eth0 = '192.0.2.1'
$ipaddress6_eth0 = '2001:db8::1'
$ipaddress_eth1 = '198.51.100.1'
$ipaddress_lo = '127.0.0.1'
$tests = monit_validate_tests('process', [
  { 'type' => 'cpu', 'operator' => '>', 'value' => '80%', 'tolerance' => { 'cycles' => 3 } },
  { 'type' => 'total memory', 'operator' => 'GT', 'value' => '1 GB', 'action' => 'restart',
    'tolerance' => { 'cycles' => 5, 'times' => 2 } },
  { 'type' => 'connection', 'port' => 80, 'host' => 'localhost', 'protocol' => 'http',
    'protocol_test' => { 'status' => 200, 'request' => '/health' }, 'timeout' => 5, 'retry' => 2 },
  { 'type' => 'connection', 'port' => 25, 'protocol' => 'smtp', 'socket_type' => 'tcpssl',
    'socket_type_cypher' => 'tlsv12', 'protocol_test' => [{ 'send' => 'HELO', 'expect' => '250' }] },
])
file { '/tmp/functions_monit_ssh_natives':
  content => "${ipaddresses()}\n${tests}\n",
}
