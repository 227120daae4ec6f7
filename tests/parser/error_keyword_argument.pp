notice('x', function)
