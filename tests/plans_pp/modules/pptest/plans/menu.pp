# prompt::menu and prompt with no terminal: the default is the answer
# (Bolt's executor asks nothing); without one, or with a wrong one, errors.
plan pptest::menu(String $ask = 'defaults') {
  case $ask {
    'defaults': {
      $fruit = prompt::menu('Select a fruit', ['apple', 'banana', 'carrot'], 'default' => 'banana')
      $env = prompt::menu('Select environment', { 'd' => 'development', 'p' => 'production' }, 'default' => 'production')
      $number = prompt::menu('Pick a number', [1, 2, 3], 'default' => 2)
      $name = prompt('Name', 'default' => 'anon')
      return [$fruit, $env, $number, $name]
    }
    'no_default': { prompt::menu('Select a fruit', ['apple']) }
    'wrong_default': { prompt::menu('Select a fruit', ['apple'], 'default' => 'durian') }
    'empty': { prompt::menu('Select a fruit', []) }
    'prompt_default': { prompt('Name', 'default' => 3) }
  }
}
