# '10:00' matches none of Timespan's default formats.
notify { 't': message => Timespan('10:00') }
