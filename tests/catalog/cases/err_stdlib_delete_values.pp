# stdlib's delete_values wants a hash first.
notice(delete_values(['a'], 'a'))
