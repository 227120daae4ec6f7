# stdlib::str2resource(undef): Puppet's error.
notify { 'a': message => 'm' }
notify { 'b': message => "${stdlib::str2resource(undef)}" }
notify { 'later': }
