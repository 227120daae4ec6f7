# stdlib::str2resource('Notify[later]'): Puppet's error.
notify { 'a': message => 'm' }
notify { 'b': message => "${stdlib::str2resource('Notify[later]')}" }
notify { 'later': }
