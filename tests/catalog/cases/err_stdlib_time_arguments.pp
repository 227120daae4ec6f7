# time() takes a zone at most.
notify { "x": message => String(time("UTC", 1)) }
