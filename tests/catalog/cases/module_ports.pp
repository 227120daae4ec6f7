# Module functions ported natively: openstack_extras's validate_yum_hash
# (the hash back when it has repositories), staging's staging_parse (a
# URI's path: file name, base name, extension, parent) and vswitch's
# range_to_mask (a CPU list as a hexadecimal mask; undef for undef or '').
$y = validate_yum_hash({ 'r' => { 'baseurl' => 'http://x', 'enabled' => 1 }, 'q' => ['descr'] })
$y0 = validate_yum_hash({})
$f = staging_parse('http://example.com/a/pkg-1.0.tar.gz?x=1#f')
$b = staging_parse('puppet:///modules/m/pkg-1.0.tar.gz', 'basename', '.tar.gz')
$b2 = staging_parse('/tmp/x.zip', 'basename')
$b3 = staging_parse('/tmp/.bashrc', 'basename')
$x = staging_parse('C:\\tmp\\y.tgz', 'extname')
$x2 = staging_parse('/tmp/y.', 'extname')
$p = staging_parse('/opt/a/b.tgz', 'parent')
$p2 = staging_parse('ftp://example.com/', 'parent')
$m = [range_to_mask('0-3,8'), range_to_mask('64,3-1,1'), range_to_mask('1,,2'), range_to_mask('2-2,')]
$n = [range_to_mask(''), range_to_mask(undef)]
notify { 'ports': message => "${y}|${y0}|${f}|${b}|${b2}|${b3}|${x}|${x2}|${p}|${p2}|${m}|${n}" }
