# stdlib::str2resource('abc'): Puppet's error.
notify { 'a': message => 'm' }
notify { 'b': message => "${stdlib::str2resource('abc')}" }
notify { 'later': }
