# Shadowed: the project of the same name comes first.
plan test_project() {
  return 'from the module'
}
