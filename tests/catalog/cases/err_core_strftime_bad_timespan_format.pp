# A Timespan format only knows %D %H %M %S %L %N.
notify { 'x': message => strftime(Timespan(10), '%H:%Y') }
