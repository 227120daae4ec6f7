notify { 'lookups': message => [
  lookup('common_key'), lookup('nested.b.c'), lookup('packages'), lookup('packages', Array, 'unique'),
  lookup('users', Hash, 'hash'), lookup('merged_hash', { 'merge' => 'deep' }), lookup('missing', String, 'first', 'dflt'),
  lookup('interp'), lookup('aliased'), hiera('common_key'),
] }
