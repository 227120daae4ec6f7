# Language corners the Debian module corpus met (ferry issue 14).
# Hash + Array: an array of pairs, or a flat key/value list.
$pairs = { 'a' => 1 } + [['b', 2], ['c']]
$flat = { 'a' => 1 } + ['d', 4]
notify { 'hash_plus_array': message => "${pairs} ${flat}" }
# A reference with an undef title is undef; with an array of titles, an array.
$none = File[undef]
$many = Notify[['hash_plus_array']]
notify { 'refs': message => "${$none =~ Undef} ${$many =~ Array[Type[Notify], 1, 1]}" }
# Relationship metaparameters are flattened and lose undef in the catalog.
notify { 'flat':
  before => [[Notify['refs']], [undef, Notify['hash_plus_array']]],
  tag    => ['x'],
}
# `defined` takes a reference, a type or a name.
notify { 'defined': message => "${defined(Notify['flat'])} ${defined(File)} ${defined('notify')}" }
notify { 'bool2str': message => bool2str(false, 'yes', 'no') }
