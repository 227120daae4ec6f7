# ensure_resource in a defined type: a resource declared with other
# parameters is a duplicate declaration, reported at both places.
define ensure_in_def ($x = 1) {
  ensure_resource('notify', 'n', { 'message' => 'm' })
}
notify { 'n': message => 'M' }
ensure_in_def { 'a': }
