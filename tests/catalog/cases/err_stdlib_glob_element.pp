# glob of an array holding a number.
glob(['/tmp', 1])
