# private(undef): a 3.x function gets undef as '', an empty message.
class privatefn::undefmsg {
  call('private', undef)
}
