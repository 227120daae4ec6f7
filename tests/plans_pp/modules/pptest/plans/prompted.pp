plan pptest::prompted() {
  $with_default = prompt('Name', { 'default' => 'anon' })
  $answer = prompt('Password', { 'sensitive' => true })
  return $answer
}
