define app::instance (String $port, $ensure = 'present') {
  file { "/etc/app/${title}.conf": ensure => $ensure, content => "port=${port}" }
  notify { "instance ${name}": }
}
app::instance { 'one': port => '8001' }
app::instance { ['two', 'three']: port => '8002', ensure => absent }
