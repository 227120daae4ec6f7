# A Timespan takes no timezone.
notify { 'x': message => strftime(Timespan(10), '%S', 'UTC') }
