# openstacklib's os_transport_url: a messaging URL from its parts (users
# and passwords URL-encoded, IPv6 hosts bracketed, ports on every host,
# the query with ssl as 1/0).
$a = os_transport_url({ 'transport' => 'rabbit', 'host' => '192.0.2.1', 'port' => 5672,
  'username' => 'guest', 'password' => 'p@ss/word', 'virtual_host' => 'nova' })
$b = os_transport_url({ 'transport' => 'rabbit', 'hosts' => ['2001:db8::1', 'h2'], 'port' => '5671',
  'username' => 'u', 'ssl' => 'true', 'query' => { 'heartbeat' => '30' } })
$c = os_transport_url({ 'transport' => 'amqp', 'host' => 'localhost' })
notify { 'urls': message => "${a} ${b} ${c}" }
