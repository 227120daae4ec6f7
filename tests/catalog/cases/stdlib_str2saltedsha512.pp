# stdlib's str2saltedsha512 (issue 14): the salt is random, so only the
# form of the result is shown: 8 hex digits of salt, 128 of SHA-512.
notify { 'form': message => String(str2saltedsha512('secret') =~ /\A[0-9a-f]{136}\z/) }
notify { 'empty': message => String(str2saltedsha512('') =~ /\A[0-9a-f]{136}\z/) }
