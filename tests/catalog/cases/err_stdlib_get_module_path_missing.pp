# A module that is on no modulepath entry: stdlib's error, naming the environment.
$path = get_module_path('no_such_module')
