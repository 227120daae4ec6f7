# A private class of a module declared from outside it (stdlib's
# assert_private, as ceilometer::deps calls it).
include ceilometer::deps
