# Type.new(x) (openstacklib::defaults: `Integer.new($facts['os']['release']['major'])`),
# openstacklib's is_service_default and stdlib's validate_legacy with values
# that match their type (a type or a type string).
$major = Integer.new('9')
$f = Float.new('1.5')
$s = String.new(42)
notify { 'new': message => "${major + 1} ${f} ${s} ${Integer.new('0x10')}" }
$d = is_service_default('<SERVICE DEFAULT>')
$x = is_service_default('x')
$u = is_service_default(undef)
notify { 'svc': message => "${d} ${x} ${u} ${is_service_default(1)}" }
validate_legacy(String, 'validate_string', 'ok')
validate_legacy('Optional[Integer]', 'validate_integer', undef)
validate_legacy(Stdlib::Absolutepath, 'validate_absolute_path', '/tmp')
validate_legacy(Array[String], 'validate_array', ['a'], 'extra')
