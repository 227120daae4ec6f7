# md5(), sha1() and digest() (Puppet's default digest_algorithm, sha256)
# of strings, including the empty string and non-ASCII text.
notify { 'md5': message => md5('hello') }
notify { 'md5 empty': message => md5('') }
notify { 'md5 utf8': message => md5('héllo ✓') }
notify { 'sha1': message => sha1('hello') }
notify { 'sha1 empty': message => sha1('') }
notify { 'digest': message => digest('hello') }
notify { 'digest empty': message => digest('') }
notify { 'digest utf8': message => digest('héllo ✓') }
notify { 'md5 undef': message => md5(undef) }
