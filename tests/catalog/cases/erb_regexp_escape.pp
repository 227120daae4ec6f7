# Regexp.escape in a template (apache/mod/php.conf.erb).
$extensions = ['.php', '.phtml', 'a+b (c)', 'x|y*z?', '[t]{1}^$#-\\', "tab\there"]
notify { 'escaped':
  message => inline_template("<%= @extensions.collect { |s| Regexp.escape(s) }.join('|') %>"),
}
notify { 'quote':
  message => inline_template('<%= Regexp.quote("a.b c") %>'),
}
