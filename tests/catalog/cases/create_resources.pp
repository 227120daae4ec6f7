$users = { 'u1' => { 'uid' => 2001 }, 'u2' => { 'uid' => 2002, 'shell' => '/bin/zsh' } }
create_resources('user', $users, { 'shell' => '/bin/bash' })
ensure_packages(['tmux', 'git'])
ensure_resource('file', '/srv', { 'ensure' => 'directory' })
ensure_resource('file', '/srv', { 'ensure' => 'directory' })
