# stdlib::str2resource(): Puppet's error.
notify { 'a': message => 'm' }
notify { 'b': message => "${stdlib::str2resource()}" }
notify { 'later': }
