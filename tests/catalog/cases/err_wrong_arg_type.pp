function needs_int(Integer $i) { $i }
notify { 'x': message => needs_int('a') }
