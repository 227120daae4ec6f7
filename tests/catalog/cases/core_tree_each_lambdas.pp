# tree_each's lambda of two parameters gets each path and value, of one
# parameter each value; breadth-first without the root.
tree_each({ 'k' => [7, { 'z' => 8 }] }) |$path, $v| { notify { "df ${path} ${v}": } }
tree_each([1, [2, [3]]], { 'order' => 'breadth_first', 'include_root' => false }) |$v| { notify { "bf ${v}": } }
