# get_resources on a real target: instances of every type ferry describes,
# a whole type listed, and the names Bolt (or ferry) refuses.
plan pptest::resources(TargetSpec $targets, String $dir) {
  run_command("rm -rf ${dir} && mkdir -p ${dir} && printf 'hello\\n' > ${dir}/f && chmod 0640 ${dir}/f && ln -s f ${dir}/l", $targets)
  $set = get_resources($targets, ['User[root]', Group['root'], "File[${dir}/f]", "File[${dir}/l]",
    "File[${dir}/gone]", 'Package[openssh-server]', 'Package[no-such-package-ferry]', 'Service[ssh]',
    'User[no-such-user-ferry]'])
  $found = $set.first.value['resources']
  $by = $found.reduce({}) |$m, $r| { $m + { "${r['type']}[${r['title']}]" => $r } }
  $untimed = $by["File[${dir}/f]"]['parameters'].filter |$k, $v| { $k !~ /time$/ }
  $users = get_resources($targets, User).first.value['resources']
  $refused = ['not a type', 'Host[x]', 'File'].map |$r| {
    $e = catch_errors() || { get_resources($targets, $r) }
    [$e.kind, $e.message]
  }
  return({
    'count'   => $found.length,
    'action'  => $set.first.action,
    'root'    => $by['User[root]']['parameters'].filter |$k, $v| { $k in ['ensure', 'uid', 'gid', 'home', 'provider', 'password'] },
    'tags'    => $by['User[root]']['tags'],
    'group'   => $by['Group[root]'],
    'file'    => $untimed,
    'link'    => $by["File[${dir}/l]"]['parameters'].filter |$k, $v| { $k in ['ensure', 'target', 'mode', 'content'] },
    'gone'    => $by["File[${dir}/gone]"]['parameters']['ensure'],
    'package' => $by['Package[openssh-server]']['parameters']['ensure'] =~ /^[0-9]/,
    'apt'     => $by['Package[openssh-server]']['parameters']['provider'],
    'no_pkg'  => $by['Package[no-such-package-ferry]']['parameters']['ensure'],
    'service' => $by['Service[ssh]']['parameters']['ensure'] in ['running', 'stopped'],
    'no_user' => $by['User[no-such-user-ferry]']['parameters']['ensure'],
    'users'   => $users.filter |$u| { $u['title'] == 'root' }.length,
    'refused' => $refused,
  })
}
