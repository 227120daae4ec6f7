# A Struct key written NotUndef['k'] is the required key 'k' (collectd's
# Collectd::SNMP::Data).
type Mydata = Struct[{ Optional['instance'] => String, NotUndef['type'] => String[1] }]
$ok = { 'type' => 'x' } =~ Mydata
$missing = { 'instance' => 'x' } =~ Mydata
notify { 'struct': message => "${ok} ${missing}" }
