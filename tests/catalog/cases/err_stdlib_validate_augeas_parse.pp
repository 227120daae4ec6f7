# validate_augeas of content its lens cannot parse: Augeas's error in the message.
validate_augeas("root:x:0:0:root:/root\n", 'Passwd.lns')
