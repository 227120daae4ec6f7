# SemVer and SemVerRange: creation, comparison, sorting, ranges (x, ~, ^, hyphen, ||), matching and string forms.
$v = SemVer('1.2.3')
notify { 's1': message => $v }
notify { 's2': message => "${v}" }
notify { 's3': message => $v > SemVer('1.2.0') }
notify { 's4': message => SemVer('1.2.3') =~ SemVerRange('>=1.0.0 <2.0.0') }
notify { 's5': message => SemVer(1, 2, 3, 'rc1') }
notify { 's7': message => '1.2.3' =~ SemVer }
notify { 's8': message => SemVer('1.2.3') =~ SemVer['>=1.0.0'] }
notify { 's9': message => String(SemVerRange('>=1.0.0')) }
notify { 's10': message => SemVer('1.2.3') == SemVer('1.2.3') }
notify { 's11': message => SemVer('1.2.3-rc.1') < SemVer('1.2.3') }
notify { 's12': message => [SemVer('1.10.0'), SemVer('1.9.0')].sort }
notify { 's13': message => String(SemVer('1.10.0-a.1+build.5')) }
notify { 's14': message => SemVer('2.0.0') in SemVerRange('1.x') }
notify { 's15': message => SemVerRange('~1.2') }
notify { 's16': message => "${SemVerRange('~1.2')}" }
notify { 's17': message => SemVer('1.2.9') =~ SemVerRange('~1.2') }
notify { 's18': message => SemVer('1.3.0') =~ SemVerRange('^1.2') }
notify { 's19': message => SemVer('1.2.3') =~ SemVerRange('1.2.0 - 1.3.0') }
notify { 's20': message => SemVer('1.2.3') =~ SemVerRange('>=1.3.0 || 1.2.3') }
notify { 's21': message => type(SemVer('1.2.3')) }
notify { 's22': message => SemVer('1.2.3') =~ SemVer }
