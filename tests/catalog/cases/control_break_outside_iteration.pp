function f() { [1, 2].each |$x| { break() } 5 }
notify { "r${f()}": }
break()
