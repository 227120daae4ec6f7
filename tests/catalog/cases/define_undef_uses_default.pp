# A parameter given as undef in a resource body counts as not given: the
# default applies, and the type is checked against the default (apt::source
# passes `weak_ssl => $_key['weak_ssl']` to apt::key's `Boolean $weak_ssl = false`).
define keyed(Boolean $weak_ssl = false, Optional[String] $server = undef, String $name2 = $title) {
  notify { "keyed ${title}": message => "${weak_ssl} ${server} ${name2}" }
}
class withdefault(Integer $port = 80, $plain = 'p') {
  notify { 'withdefault': message => "${port} ${plain}" }
}
$key = { 'id' => 'A1' }
keyed { 'k1': weak_ssl => $key['weak_ssl'], server => $key['server'] }
keyed { 'k2': weak_ssl => undef, name2 => undef }
class { 'withdefault': port => undef, plain => undef }
