# generate runs a fully qualified command in its directory; its standard
# output (and error) is the value.
$out = generate('/bin/sh', '-c', 'echo hello; pwd')
notify { 'gen': message => $out }
