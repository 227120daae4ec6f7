# stdlib::str2resource takes a string, not a reference: Puppet names the
# value's type Type[Resource].
notify { 'a': message => 'm' }
notify { 'b': message => "${stdlib::str2resource(Notify['a'])}" }
