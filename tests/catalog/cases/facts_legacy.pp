notify { 'legacy': message => [$::hostname, $fqdn, $::os['release']['major'], $facts['networking']['interfaces']['eth0']['ip'], $processorcount + 1, $memorysize_mb] }
