# Timespan and Timestamp: creation from strings, numbers and hashes, arithmetic, comparison, typed ranges and string forms.
$ts = Timespan('1-02:03:04')
notify { 't1': message => $ts }
notify { 't2': message => "${Timespan(3600)}" }
notify { 't3': message => Timespan(90.5) }
notify { 't4': message => Timespan({ hours => 2, minutes => 30 }) }
notify { 't5': message => Timespan('02:03:04') < Timespan('1-00:00:00') }
notify { 't6': message => Timespan(60) + Timespan(30) }
notify { 't7': message => Timestamp('2020-01-01T00:00:00.000 UTC') }
notify { 't8': message => Timestamp('2020-01-01T00:00:00.000 UTC') + Timespan(86400) }
notify { 't9': message => Timestamp('2020-03-01T12:00:00.000 UTC') - Timestamp('2020-02-28T12:00:00.000 UTC') }
notify { 't10': message => Timestamp(0) }
notify { 't11': message => Timestamp('2020-01-01T00:00:00.000 UTC') < Timestamp('2021-01-01') }
notify { 't12': message => Timespan(3600) =~ Timespan[0, 7200] }
notify { 't13': message => Timespan(-90) }
notify { 't14': message => Timestamp('2020-01-01T00:00:00.000 UTC') =~ Timestamp }
notify { 't15': message => Timespan(1.25) * 2 }
notify { 't16': message => String(Timespan(3661)) }
notify { 't17': message => Timestamp(1577836800.5) }
notify { 't19': message => Timestamp('2020-01-01T10:00:00+02:00') }
notify { 't20': message => Timespan(7200) / 2 }
