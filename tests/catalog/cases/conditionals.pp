$os = $facts['os']['family']
if $os == 'RedHat' { $pkg = 'httpd' } elsif $os == 'Debian' { $pkg = 'apache2' } else { $pkg = 'unknown' }
unless $pkg == 'unknown' { notify { "pkg ${pkg}": } }
case $os {
  'RedHat', 'CentOS': { $c = 'rh' }
  /^Deb(ian)?$/: { $c = "deb-${1}" }
  default: { $c = 'other' }
}
$s = $os ? { 'Debian' => 'yes', default => 'no' }
$t = 5 ? { Integer[0, 3] => 'small', Integer => 'big' }
notify { 'case': message => "${c} ${s} ${t}" }
if 'foobar' =~ /^foo(.*)$/ { notify { "match ${0} ${1}": } }
