plan embedded() {
  return 'from the embedded project'
}
