# A generator that exits non-zero fails with its output.
$out = generate('/bin/sh', '-c', 'echo oops >&2; exit 3')
notify { 'gen': message => $out }
