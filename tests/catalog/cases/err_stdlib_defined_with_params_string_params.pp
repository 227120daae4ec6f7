# defined_with_params(Notify['a'], 'str'): Puppet's error.
notify { 'a': message => 'm' }
notify { 'b': message => "${defined_with_params(Notify['a'], 'str')}" }
