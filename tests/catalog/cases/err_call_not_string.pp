# call() needs a function name (or a Deferred).
call(1)
