plan other::skipped() {
  return 4
}
