# stdlib's difference wants two arrays.
notice(difference(['a'], 'a'))
