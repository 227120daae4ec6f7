# stdlib::str2resource('Nosuch[a]'): Puppet's error.
notify { 'a': message => 'm' }
notify { 'b': message => "${stdlib::str2resource('Nosuch[a]')}" }
notify { 'later': }
