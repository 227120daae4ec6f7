class mymod (
  String $greeting = 'hello',
  Mymod::Mode $mode = 'fast',
  Hash $settings = {},
) {
  contain mymod::sub::inner
  notify { "mymod ${greeting}": message => mymod::double($greeting) }
  mymod::thing { 'a': value => $settings['a'] }
}
