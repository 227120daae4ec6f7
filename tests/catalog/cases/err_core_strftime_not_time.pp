# strftime() of an Integer matches none of its signatures.
notify { 'x': message => strftime(1, '%F') }
