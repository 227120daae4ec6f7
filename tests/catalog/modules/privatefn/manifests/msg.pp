# private() with a message of its own.
class privatefn::msg {
  call('private', 'Only privatefn may use this')
}
