# A reference to an unknown resource type fails at the reference, even
# inside defined().
if !defined(Nosuchtype['x']) {
  notify { 'not reached': }
}
