# private() passes only its first argument on.
class privatefn::two {
  call('private', 'first', 'second')
}
