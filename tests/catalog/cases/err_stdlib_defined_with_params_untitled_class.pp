# defined_with_params(Class): Puppet's error.
notify { 'a': message => 'm' }
notify { 'b': message => "${defined_with_params(Class)}" }
