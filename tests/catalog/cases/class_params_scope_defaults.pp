class defaults_ref (
  $base = '/opt',
  $dir = "${base}/app",
  $list = [$base, $dir],
) {
  notify { 'dr': message => [$base, $dir, $list, $title, $name] }
}
class { 'defaults_ref': base => '/srv' }
