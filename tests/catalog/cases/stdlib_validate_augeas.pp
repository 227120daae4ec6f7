# stdlib's validate_augeas: content a lens parses, restrictions that match nothing.
$passwd = "root:x:0:0:root:/root:/bin/bash\nfoo:x:1:1::/:/bin/sh\n"
validate_augeas($passwd, 'Passwd.lns')
validate_augeas($passwd, 'Passwd.lns', ['$file/bar', '$file/*[shell = "/bin/barsh"]'])
validate_augeas($passwd, 'Passwd.lns', [], 'unused message')
validate_augeas("anything\n", 'Nosuch.lns')
validate_augeas("Defaults env_reset\nroot ALL=(ALL:ALL) ALL\n", 'Sudoers.lns', ['$file/spec[user = "nobody"]'])
notify { 'validate_augeas': message => 'all passed' }
