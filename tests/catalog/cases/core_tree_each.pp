# tree_each: depth-first (default) and breadth-first walks over nested
# arrays and hashes, with lambdas of one (value) and two (path, value)
# parameters, without the root, without containers, without values, with a
# container_type that makes hashes leaves; without a lambda an iterator.
$t = [1, [2, [3]], { 'a' => 4, 'b' => [5] }, []]
$r = [
  Array(tree_each($t)),
  Array(tree_each($t, { 'order' => 'breadth_first' })),
  Array(tree_each($t, { 'include_root' => false })),
  Array(tree_each($t, { 'include_containers' => false })),
  Array(tree_each($t, { 'include_values' => false })),
  Array(tree_each($t, { 'order' => 'breadth_first', 'include_values' => false })),
  Array(tree_each($t, { 'order' => 'breadth_first', 'include_containers' => false })),
  Array(tree_each($t, { 'container_type' => Array, 'include_root' => false })),
  Array(tree_each({ 'x' => { 'y' => 1 } }, { 'container_type' => Hash })),
  Array(tree_each([]))
]
$paths = []
$ret = tree_each({ 'k' => [7, 8] }) |$path, $v| { notice("path ${path} = ${v}") }
$vals = tree_each([[1], 2]).map |$e| { $e[1] }
tree_each([10, [20]], { 'include_containers' => false }) |$v| { notice("value ${v}") }
notify { 'tree_each': message => "${r} ${ret} ${vals}" }
