# validate_augeas with a restriction that matches, and its own message: every path tried is listed.
validate_augeas("root:x:0:0:root:/root:/bin/bash\nfoo:x:1:1::/:/bin/barsh\n", 'Passwd.lns', ['$file/bar', '$file/*[shell="/bin/barsh"]', '$file/root'], 'no barsh')
