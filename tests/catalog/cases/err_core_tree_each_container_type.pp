# tree_each with a container_type that is not Array, Hash or Object.
tree_each([1], { 'container_type' => String }) |$v| { notice($v) }
