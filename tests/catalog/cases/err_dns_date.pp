# dns's date(): its Ruby block takes no arguments, Puppet passes it the
# argument list, so every call fails.
$d = date()
