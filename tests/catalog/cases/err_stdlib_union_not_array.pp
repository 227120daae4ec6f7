# union() takes only arrays.
notify { 'x': message => String(union(['a'], 'b')) }
