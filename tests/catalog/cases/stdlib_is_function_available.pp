# stdlib's is_function_available: true for Puppet's and stdlib's
# functions, false for unknown names and non-strings (issue 14).
notify { 'is_function_available': message => [is_function_available('notice'), is_function_available('map'), is_function_available('validate_string'), is_function_available('no_such_function'), is_function_available(3)] }
