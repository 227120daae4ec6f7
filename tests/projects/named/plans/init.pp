plan test_project() {
  return 'from the project'
}
