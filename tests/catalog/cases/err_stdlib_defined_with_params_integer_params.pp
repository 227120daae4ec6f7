# defined_with_params(Notify['a'], 3): Puppet's error.
notify { 'a': message => 'm' }
notify { 'b': message => "${defined_with_params(Notify['a'], 3)}" }
