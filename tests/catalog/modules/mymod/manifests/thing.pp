define mymod::thing ($value = 'none') {
  notify { "thing-${title}": message => "value=${value}" }
}
