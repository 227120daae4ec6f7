# A default that reads a later parameter not yet evaluated.
class pdef2(String $a = "${b}/x", String $b = 'y') { }
include pdef2
