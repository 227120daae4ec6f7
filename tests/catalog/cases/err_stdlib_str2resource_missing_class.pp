# stdlib::str2resource('Class[nope]'): Puppet's error.
notify { 'a': message => 'm' }
notify { 'b': message => "${stdlib::str2resource('Class[nope]')}" }
notify { 'later': }
