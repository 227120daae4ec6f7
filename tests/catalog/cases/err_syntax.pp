notify { 'a':
  message => }
