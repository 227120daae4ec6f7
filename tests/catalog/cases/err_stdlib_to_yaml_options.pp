# to_yaml's options must be a Hash.
notify { 'x': message => to_yaml(['abc'], 'indentation') }
