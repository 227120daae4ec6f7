# group_by without a block.
notice(group_by([1]))
