# collectd_convert_processes needs an array or a hash.
$p = collectd_convert_processes('a')
