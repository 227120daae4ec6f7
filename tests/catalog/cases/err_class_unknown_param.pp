class known ($a = 1) {}
class { 'known': b => 2 }
