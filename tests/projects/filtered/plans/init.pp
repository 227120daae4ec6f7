plan filtered() {
  return 1
}
