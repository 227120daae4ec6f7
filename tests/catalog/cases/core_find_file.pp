# find_file() / find_template() / module_directory(): the first existing
# path of several (Strings or an Array of Strings), undef when none exists.
# Paths are shown from the modules directory on.
function rel(Optional[String] $p) >> String {
  $p ? { undef => 'undef', default => regsubst($p, '^.*/modules/', '') }
}
notify { 'file': message => rel(find_file('filefns/hello.txt')) }
notify { 'file nested': message => rel(find_file('filefns/sub/nested.txt')) }
notify { 'file dir': message => rel(find_file('filefns/sub')) }
notify { 'file first': message => rel(find_file('filefns/nope', 'nomodule/x', 'filefns/hello.txt')) }
notify { 'file array': message => rel(find_file(['filefns/nope', 'filefns/sub/nested.txt'])) }
notify { 'file none': message => rel(find_file('filefns/nope', 'nomodule/x')) }
notify { 'file no args': message => rel(find_file()) }
notify { 'file absolute': message => rel(find_file('/nonexistent/ferry', '/etc/hostname')) }
notify { 'file bare module': message => rel(find_file('filefns')) }
notify { 'template': message => rel(find_template('filefns/t.erb')) }
notify { 'template first': message => rel(find_template(['filefns/x.erb', 'filefns/sub.epp'])) }
notify { 'template none': message => rel(find_template('filefns/hello.txt')) }
notify { 'moddir': message => rel(module_directory('filefns')) }
notify { 'moddir first': message => rel(module_directory('nomodule', 'mymod')) }
notify { 'moddir array': message => rel(module_directory(['nomodule', 'filefns'])) }
notify { 'moddir none': message => rel(module_directory('nomodule')) }
