# 'attr' is a reserved word: no function can be called by it.
notify { 'x': message => attr('a') }
