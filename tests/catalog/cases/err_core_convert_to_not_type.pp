# convert_to with a second argument that is not a type.
notice(convert_to('1', 'Integer'))
