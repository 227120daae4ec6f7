# defined_with_params('abc'): Puppet's error.
notify { 'a': message => 'm' }
notify { 'b': message => "${defined_with_params('abc')}" }
