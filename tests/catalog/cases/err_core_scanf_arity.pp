# scanf() needs a string and a format.
notify { 'x': message => scanf('42') }
