# call() of a function nobody defines.
call('nosuch_fn', 1)
