# defined_with_params(undef): Puppet's error.
notify { 'a': message => 'm' }
notify { 'b': message => "${defined_with_params(undef)}" }
