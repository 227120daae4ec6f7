# A default may read a later parameter that was given.
class pdef3(String $a = "${b}/x", String $b = 'y') { }
class { 'pdef3': b => 'given' }
notify { 'a': message => $pdef3::a }
