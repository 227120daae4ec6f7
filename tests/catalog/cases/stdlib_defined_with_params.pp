# stdlib's defined_with_params: a resource declared so far (virtual ones
# too) with every given parameter (Ruby's ==: case matters, 10 == 10.0,
# an undef value matches an unset parameter); references as Type[title],
# as 'Type[title]' strings (a type Puppet does not know looks up the
# class of that title), Class references, a bare type (every resource of
# it); the calling definition does not find itself.
user { 'dan': ensure => present, uid => 10, groups => ['a', 'b'] }
@notify { 'virt': message => 'v' }
file { '/tmp/x': ensure => file, mode => '0644' }
class dwp_cls ($p = 1) { }
include dwp_cls
define dwp_def ($x = undef) {
  notify { "in ${title}":
    message => "self=${defined_with_params(Dwp_def[$title])} other=${defined_with_params(Dwp_def['one'])}",
  }
}
dwp_def { 'one': x => 'val' }
dwp_def { 'two': }
$r = [
  defined_with_params(User['dan']),
  defined_with_params(User['dan'], { 'ensure' => 'present' }),
  defined_with_params(User['dan'], { 'ensure' => present }),
  defined_with_params(User['dan'], { 'ensure' => 'absent' }),
  defined_with_params(User['dan'], { 'ensure' => 'Present' }),
  defined_with_params(User['dan'], { 'ENSURE' => 'present' }),
  defined_with_params(User['dan'], { 'uid' => 10 }),
  defined_with_params(User['dan'], { 'uid' => 10.0 }),
  defined_with_params(User['dan'], { 'uid' => '10' }),
  defined_with_params(User['dan'], { 'groups' => ['a', 'b'] }),
  defined_with_params(User['dan'], { 'groups' => ['b', 'a'] }),
  defined_with_params(User['dan'], { 'shell' => undef }),
  defined_with_params(User['dan'], { 'shell' => '' }),
  defined_with_params(User['dan'], { 'ensure' => 'present', 'uid' => 11 }),
  defined_with_params(User['dan'], { 'name' => 'dan' }),
  defined_with_params(User['dan'], { 'title' => 'dan' }),
  defined_with_params(User['bob']),
  defined_with_params('User[dan]'),
  defined_with_params('user[dan]', { 'uid' => 10 }),
  defined_with_params('Nosuch[dwp_cls]'),
  defined_with_params('Nosuch[User[dan]]'),
  defined_with_params('Notify[[a]]'),
  defined_with_params(User['dan'], undef),
  defined_with_params(User['dan'], ''),
  defined_with_params(User['dan'], {}),
  defined_with_params(User['dan'], ['uid']),
  defined_with_params(User['dan'], ['shell']),
  defined_with_params(User['dan'], [['uid', 10]]),
  defined_with_params(User['dan'], [['uid', 11]]),
  defined_with_params(User['dan'], { 'uid' => 10 }, 'ignored'),
  defined_with_params(Notify['virt']),
  defined_with_params(Notify['virt'], { 'message' => 'v' }),
  defined_with_params(File['/tmp/x'], { 'mode' => '0644' }),
  defined_with_params(File['/tmp/x'], { 'path' => '/tmp/x' }),
  defined_with_params(Class['dwp_cls']),
  defined_with_params(Class['dwp_cls'], { 'p' => 1 }),
  defined_with_params(Class['nope']),
  defined_with_params('Class[dwp_cls]'),
  defined_with_params(User),
  defined_with_params(User, { 'uid' => 10 }),
  defined_with_params(User, { 'uid' => 11 }),
  defined_with_params(Dwp_def['one'], { 'x' => 'val' }),
  defined_with_params(Dwp_def, { 'x' => undef }),
]
notify { 'out': message => "${r}" }
