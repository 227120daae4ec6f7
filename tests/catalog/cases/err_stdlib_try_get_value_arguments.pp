$v = try_get_value()
