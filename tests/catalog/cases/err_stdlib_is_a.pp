# stdlib's is_a wants a type second.
notice(is_a(1, 'Integer'))
