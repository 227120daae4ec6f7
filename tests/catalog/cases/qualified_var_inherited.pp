# $class::var finds a variable of the class it inherits (dns's
# $dns::rndcconfgen, set in dns::params).
class qv::params { $tool = '/usr/sbin/tool' }
class qv inherits qv::params { }
include qv
notify { 'qv': message => "${qv::tool}" }
