# defined_with_params(false): Puppet's error.
notify { 'a': message => 'm' }
notify { 'b': message => "${defined_with_params(false)}" }
