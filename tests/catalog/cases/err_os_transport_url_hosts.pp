# os_transport_url refuses hosts that are not an Array.
$u = os_transport_url({ 'transport' => 'rabbit', 'hosts' => '' })
