# An Iterator cannot be a resource attribute value.
$a = [1, 2, 3]
notify { 'it': message => $a.reverse_each }
