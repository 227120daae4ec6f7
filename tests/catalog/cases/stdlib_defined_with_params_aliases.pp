# defined_with_params and stdlib::str2resource find a resource as
# Puppet's catalog does: by title, by an alias metaparameter, or by the
# uniqueness key of a built-in type (its namevar; a file's path without
# its trailing slash), though not for exec, which is not isomorphic.
@@notify { 'exported': message => 'e' }
file { 'xfile': ensure => file, path => '/tmp/y' }
user { 'u1': name => 'realname' }
package { 'pkg': alias => ['pkg-alias'] }
exec { 'e1': command => '/bin/true' }
notify { 'Mixed Case': }
$r = [
  defined_with_params(Notify['exported']),
  defined_with_params(File['/tmp/y']),
  defined_with_params('File[/tmp/y]'),
  defined_with_params(File['/tmp/y/']),
  defined_with_params(User['realname']),
  defined_with_params(User['realname'], { 'name' => 'realname' }),
  defined_with_params(Package['pkg-alias']),
  defined_with_params(Exec['/bin/true']),
  defined_with_params(Exec['e1'], { 'command' => '/bin/true' }),
  defined_with_params(Notify['mixed case']),
  defined_with_params('notify[Mixed Case]'),
  defined_with_params(Notify, { 'title' => 'Mixed Case' }),
  defined_with_params(File['xfile'], { 'path' => '/tmp/y' }),
]
notify { 'out':
  message => "${r} ${stdlib::str2resource('File[/tmp/y/]')} ${stdlib::str2resource('User[realname]')} ${stdlib::str2resource('Package[pkg-alias]')}",
}
