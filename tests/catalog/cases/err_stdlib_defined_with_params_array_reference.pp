# defined_with_params([Notify['a']]): Puppet's error.
notify { 'a': message => 'm' }
notify { 'b': message => "${defined_with_params([Notify['a']])}" }
