# get_ext_net_name needs a hash.
$n = get_ext_net_name(['a'])
