# The names of the targets it is given, nothing run on them.
plan pptest::names(TargetSpec $targets) {
  return get_targets($targets).map |$t| { $t.name }
}
