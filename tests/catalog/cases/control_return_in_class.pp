class c {
  notify { "before": }
  if true { return() }
  notify { "after": }
}
include c
notify { "main": }
