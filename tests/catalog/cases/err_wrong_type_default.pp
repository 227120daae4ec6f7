class wd (Integer $n = 'abc') {}
include wd
