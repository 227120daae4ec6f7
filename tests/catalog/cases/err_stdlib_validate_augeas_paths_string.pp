# validate_augeas with restrictions given as a string, not an array.
validate_augeas("root:x:0:0:root:/root:/bin/bash\n", 'Passwd.lns', '$file/root')
