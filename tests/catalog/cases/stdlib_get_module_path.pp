# stdlib's get_module_path: the first module of the name on the
# modulepath (Debian's stdlib, so the path is the same on every machine).
$stdlib = get_module_path('stdlib')
notify { 'stdlib path':
  message => $stdlib,
}
