# stdlib's deprecated private(): the module's own classes may declare its
# private class and defined type.
include privatefn::inner
