# stdlib's join_keys_to_values wants a hash first.
notice(join_keys_to_values(['a'], '='))
