# stdlib's base64 decode: the bytes of UTF-8 text come back as the text.
notify { 'utf8': message => base64('decode', base64('encode', 'é and ü')) }
notify { 'strict': message => base64('decode', 'w6k=', 'strict') }
