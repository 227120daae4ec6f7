# stdlib's deprecated private(), reached through call() ('private' is a
# reserved word): only this module may declare the class.
class privatefn {
  call('private')
}
