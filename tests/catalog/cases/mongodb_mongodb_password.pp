# mongodb_password: md5 of USER:mongo:PASSWORD.
notify { 'pw': message => mongodb_password('admin', 's3cret') }
notify { 'pw undef': message => mongodb_password(undef, 1) }
