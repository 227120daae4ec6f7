notice a => 1
