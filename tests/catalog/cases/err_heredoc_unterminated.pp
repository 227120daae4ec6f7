$x = @(END)
  text
notify { 'a': }
