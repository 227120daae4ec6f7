[1, 2].each |$x| { notify { "n${x}": } }
return(3)
notify { "after": }
