# strftime() of a Timespan: %D %H %M %S %L %N, flags and widths, the
# largest unit shown as a total, fractions and negative spans.
$d = Timespan({ days => 1, hours => 3, minutes => 20, seconds => 30, milliseconds => 120 })
notify { 'hms': message => strftime(Timespan({ hours => 3, minutes => 20, seconds => 30 }), '%H:%M:%S') }
notify { 'ms total': message => Timespan({ hours => 3, minutes => 20, seconds => 30 }).strftime('%M:%S') }
notify { 'all': message => strftime($d, '%D-%H:%M:%S.%L') }
notify { 'hours total': message => strftime($d, '%H:%M:%S.%N') }
notify { 'frac': message => strftime($d, '%S.%-N|%S.%3N|%S.%-L|%S.%_L|%S.%6N|%S.%_N') }
notify { 'pad': message => strftime($d, '%-H|%_H|%5H|%_5M|%-D|%3D|%010S') }
notify { 'negative': message => strftime(Timespan(-90.5), '%M:%S.%L') }
notify { 'zero': message => strftime(Timespan(0), '%D %H %M %S %L %N %-L') }
notify { 'percent': message => strftime(Timespan(61), '%M%%%S') }
notify { 'millis': message => strftime(Timespan(0.005), '%S.%L|%-L|%L') }
