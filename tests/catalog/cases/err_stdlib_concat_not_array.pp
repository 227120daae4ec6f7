# stdlib's concat wants an array first (oci::swiftstore's concat of undef).
$all = concat($facts['nosuchfact'], ['a'])
