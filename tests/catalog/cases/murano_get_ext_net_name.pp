# murano's get_ext_net_name: the first network whose L2 has router_ext.
$nets = {
  'private' => { 'L2' => { 'router_ext' => false } },
  'nol2' => {},
  'ext' => { 'L2' => { 'router_ext' => true } },
  'ext2' => { 'L2' => { 'router_ext' => true } },
}
notify { 'found': message => String(get_ext_net_name($nets)) }
notify { 'none': message => String(get_ext_net_name({ 'a' => { 'L2' => {} } })) }
notify { 'text': message => String(get_ext_net_name({ 'a' => { 'L2' => 'has router_ext' } })) }
