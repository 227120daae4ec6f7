# call with a name that is not a String.
notice(call(1))
