# Deferred values are kept in the catalog (as Puppet's JSON rendering writes them), not called.
notify { 'd1': message => Deferred('join', [['a', 'b'], ',']) }
notify { 'd2': message => Deferred('vault_lookup::lookup', ['secret/x']) }
$d = Deferred('upcase', ['x'])
notify { 'd3': message => "${d}" }
notify { 'd4': message => $d =~ Deferred }
notify { 'd5': message => { 'nested' => [Deferred('md5', ['y'])] } }
