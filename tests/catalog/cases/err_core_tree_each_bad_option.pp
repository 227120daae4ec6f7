# tree_each with an unknown order.
tree_each([1], { 'order' => 'sideways' }) |$v| { notice($v) }
