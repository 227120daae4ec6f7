# A reference whose title is undef is undef, which `defined` refuses
# (openstacklib::wsgi::apache).
$dir = undef
if !defined(File[$dir]) {
  notify { 'x': }
}
