class typed (String $a) {}
class { 'typed': a => 1 }
