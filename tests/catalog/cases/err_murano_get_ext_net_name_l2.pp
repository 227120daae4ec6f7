# get_ext_net_name on a network whose L2 is undef: Ruby's NoMethodError.
$n = get_ext_net_name({ 'a' => { 'L2' => undef } })
