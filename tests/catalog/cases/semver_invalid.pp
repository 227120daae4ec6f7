# Leading zeros are not valid in a semantic version.
notify { 'v': message => SemVer('01.2.3') }
