class once ($a = 1) {}
include once
class { 'once': a => 2 }
