# parsehocon without a default fails with the gem's parse error.
notify { 'x': message => String(parsehocon('a = ')) }
