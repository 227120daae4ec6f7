# stdlib's delete_regex works on arrays and hashes only.
notice(delete_regex(3, 'a'))
