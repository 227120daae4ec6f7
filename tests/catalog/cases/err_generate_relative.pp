# Generators must be fully qualified.
$out = generate('sh', '-c', 'true')
