$fam = $facts['os']['family']
if $fam == 'RedHat' { $pkg = 'httpd' } elsif $fam == 'Debian' { $pkg = 'apache2' } else { $pkg = 'unknown' }
unless $pkg == 'unknown' { notify { "pkg ${pkg}": } }
case $fam {
  'RedHat', 'CentOS': { $c = 'rh' }
  /^Deb(ian)?$/: { $c = "deb-${1}" }
  default: { $c = 'other' }
}
$s = $fam ? { 'Debian' => 'yes', default => 'no' }
$t = 5 ? { Integer[0, 3] => 'small', Integer => 'big' }
notify { 'case': message => "${c} ${s} ${t}" }
if 'foobar' =~ /^foo(.*)$/ { notify { "match ${0} ${1}": } }
