# call() needs at least the name.
call()
