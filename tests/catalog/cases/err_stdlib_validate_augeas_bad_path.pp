# validate_augeas with a restriction Augeas cannot read.
validate_augeas("root:x:0:0:root:/root:/bin/bash\n", 'Passwd.lns', ['$file/root['])
