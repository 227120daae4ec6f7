# A timezone strptime's %z cannot read.
notify { 'x': message => strftime(Timestamp('2016-08-24T12:13:14 UTC'), '%F', 'Mars/Olympus') }
