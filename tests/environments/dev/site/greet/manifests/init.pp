class greet {
  notify { 'greet': message => "hello from dev" }
}
