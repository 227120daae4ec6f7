define webcfg ($port = 80, $opts = {}) {
  file { "/etc/web/${title}": content => "${port} ${opts}" }
}
class site_a {
  File { mode => '0640' }
  webcfg { 'a': }
}
class site_b {
  webcfg { 'b': port => 8080, opts => { 'x' => 1 } }
}
include site_a, site_b
