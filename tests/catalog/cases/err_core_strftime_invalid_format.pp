# A Timestamp format ending inside a directive is Ruby's invalid format.
notify { 'x': message => strftime(Timestamp('2016-08-24T12:13:14 UTC'), '%F %-') }
