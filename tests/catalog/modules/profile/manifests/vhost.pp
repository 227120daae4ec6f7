define profile::vhost (
  Integer $port = 80,
  String $root = "/var/www/${title}",
) {
  file { "/etc/vhosts/${title}.conf":
    content => epp('profile/vhost.epp', { 'name' => $title, 'port' => $port, 'root' => $root }),
  }
}
