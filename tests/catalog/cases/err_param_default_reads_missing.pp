# A default that reads an earlier parameter with no value: Puppet reports
# that parameter ($b), before the missing ones.
class pdef(String $a, String $b, String $c = "${b}/x") { }
include pdef
