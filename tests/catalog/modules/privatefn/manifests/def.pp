# A private defined type.
define privatefn::def {
  call('private')
}
