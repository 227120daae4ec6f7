# 'private' is a reserved word: Puppet's validator refuses it as a
# function name (stdlib's private() is reached with call('private')).
class reserved_private {
  private()
}
