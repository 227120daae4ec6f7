# An Optional Enum given an Integer: "an undef value or a match for".
class svc2 (Optional[Enum['b', 'a']] $mode = undef) {}
class { 'svc2': mode => 3 }
