# defined_with_params(true): Puppet's error.
notify { 'a': message => 'm' }
notify { 'b': message => "${defined_with_params(true)}" }
