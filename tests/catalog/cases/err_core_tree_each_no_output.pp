# tree_each with both include_containers and include_values false.
tree_each([1], { 'include_containers' => false, 'include_values' => false }) |$v| { notice($v) }
