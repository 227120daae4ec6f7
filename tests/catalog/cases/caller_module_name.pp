# $caller_module_name: the module of the code that declared a class or
# defined type; undefined for site code (haproxy's private-class check,
# apt::pin's default explanation "${caller_module_name}: ${name}").
class probe {
  $c = defined('$caller_module_name') ? { true => $caller_module_name, default => 'undefined' }
  notify { "probe ${module_name} ${c}": }
}
define probe::thing() {
  $c = defined('$caller_module_name') ? { true => $caller_module_name, default => 'undefined' }
  notify { "thing ${title} ${module_name} ${c}": }
}
include probe
probe::thing { 'site': }
include apt
apt::pin { 'site-pin': priority => 100 }
apt::source { 'site-src': location => 'http://deb.example.com', release => 'stable', repos => 'main', pin => 500 }
