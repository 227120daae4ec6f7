# strftime() of a Timestamp: Ruby's Time#strftime directives, flags and
# widths, combined forms, and a timezone argument (offsets, names).
$t = Timestamp('2016-08-24T12:13:14.123456789 UTC')
$early = Timestamp('2021-01-03T07:05:09 UTC')
notify { 'F': message => strftime($t, '%F') }
notify { 'c': message => $t.strftime('%c') }
notify { 'date': message => strftime($t, '%Y|%C|%y|%m|%B|%b|%h|%d|%e|%j') }
notify { 'time': message => strftime($early, '%H|%k|%I|%l|%P|%p|%M|%S|%L|%N|%3N|%6N|%12N') }
notify { 'pm': message => strftime($t, '%I %l %P %p %r %R %T %X') }
notify { 'zone': message => strftime($t, '%z|%:z|%::z|%Z') }
notify { 'week': message => strftime($early, '%A|%a|%u|%w|%G|%g|%V|%U|%W') }
notify { 'week2': message => strftime($t, '%A|%a|%u|%w|%G|%g|%V|%U|%W') }
notify { 'epoch': message => strftime($t, '%s %n%t%%') }
notify { 'combined': message => strftime($early, '%D|%x|%v|%+') }
notify { 'flags': message => strftime($early, '%-d|%_m|%05d|%^B|%#b|%^a|%#p|%10A|%-10A|%-H|%_H|%3S|%_5j') }
notify { 'unknown': message => strftime($t, '%Q %E %O|%Ey %Od|%:|%:y') }
notify { 'offset': message => strftime($t, '%F %T %z %Z', '+09:00') }
notify { 'offset compact': message => strftime($t, '%F %T %:z', '-0530') }
notify { 'pst': message => strftime($t, '%F %T %z', 'PST') }
notify { 'utc name': message => strftime($t, '%F %T %z %Z', 'UTC') }
notify { 'empty tz': message => strftime($t, '%F %T %Z', '') }
notify { 'rollover': message => strftime(Timestamp('2020-12-31T23:30:00 UTC'), '%F %T', '+02:00') }
