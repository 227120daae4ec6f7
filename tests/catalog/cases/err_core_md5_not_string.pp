# md5() of a number: the 3.x function hands it to Ruby's Digest.
notify { 'x': message => md5(42) }
