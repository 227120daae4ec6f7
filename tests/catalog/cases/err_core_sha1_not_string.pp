# sha1() of a Boolean: Ruby's implicit conversion fails.
notify { 'x': message => sha1(true) }
