# Puppet core's compare: numbers (Integer against Float), strings ignoring
# case by default or not, versions, timespans and timestamps (also against
# numbers, either way round).
$n = [compare(1, 2), compare(2, 1), compare(3, 3), compare(1, 1.5), compare(2.5, 2)]
$s = [compare('a', 'B'), compare('a', 'B', false), compare('A', 'a'), compare('A', 'a', false), compare('b', 'a', true), compare('', 'a')]
$v = [compare(SemVer('1.2.3'), SemVer('1.10.0')), compare(SemVer('2.0.0'), SemVer('2.0.0-rc1')), compare(SemVer('1.0.0'), SemVer('1.0.0'))]
$t = [compare(Timespan(3), Timespan(2)), compare(Timespan(2), 5), compare(5, Timespan(2)), compare(Timestamp(10), Timestamp(20)), compare(Timestamp(10), 10), compare(30, Timestamp(10))]
notify { 'compare': message => "${n} ${s} ${v} ${t}" }
