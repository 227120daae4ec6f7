# collectd_convert_processes refuses array elements other than strings and hashes.
$p = collectd_convert_processes(['a', 3])
