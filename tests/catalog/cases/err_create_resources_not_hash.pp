# create_resources needs a hash.
create_resources('notify', 'x')
