# tree_each over a string.
tree_each('abc') |$v| { notice($v) }
