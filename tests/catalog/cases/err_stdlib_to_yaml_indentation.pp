# to_yaml's indentation must be an Integer.
notify { 'x': message => to_yaml(['abc'], {indentation => '4'}) }
