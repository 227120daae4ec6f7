plan filtered::hidden() {
  return 2
}
