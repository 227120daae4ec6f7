class base ($msg = 'base default', Integer $n = 3) {
  notify { "base ${msg} ${n}": }
}
class { 'base': msg => 'custom' }
class other (String $a, Optional[Integer] $b = undef, Array[String] $c = ['x']) {
  notify { "other ${a} ${b} ${c}": }
}
class { 'other': a => 'given' }
