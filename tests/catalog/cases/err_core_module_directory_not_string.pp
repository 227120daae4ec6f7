# module_directory() with a non-String argument.
notify { 'x': message => module_directory(1) }
