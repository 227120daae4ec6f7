notice(a => b => 1)
