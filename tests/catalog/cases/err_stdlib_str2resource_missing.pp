# stdlib::str2resource('Notify[zz]'): Puppet's error.
notify { 'a': message => 'm' }
notify { 'b': message => "${stdlib::str2resource('Notify[zz]')}" }
notify { 'later': }
