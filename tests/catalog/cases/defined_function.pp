class present_class {}
include present_class
notify { 'n': }
$x = 1
notify { 'defined': message => [
  defined('present_class'), defined('absent_class'), defined(Notify['n']), defined(Notify['nope']),
  defined('$x'), defined('$nope'), defined('file'), defined(Class['present_class']),
] }
