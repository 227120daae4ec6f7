# validate_re with an undef input (stdlib's 4.x shim passes nil).
validate_re(undef, '^x')
