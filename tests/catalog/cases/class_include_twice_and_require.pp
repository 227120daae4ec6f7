class c1 { notify { 'c1': } }
include c1
include c1
require c1
contain c1
class c2 { include c1 notify { 'c2': require => Class['c1'] } }
include c2
