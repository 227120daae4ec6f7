# redis's getvar_emptystring (a legacy Ruby function in Debian's redis
# module): a variable of another scope, or '' when it is unknown or undef.
class holder {
  $set = 'from holder'
  $nothing = undef
}
include holder
notify { 'set':
  message => getvar_emptystring('holder::set'),
}
notify { 'undef':
  message => "[${getvar_emptystring('holder::nothing')}]",
}
notify { 'unknown':
  message => "[${getvar_emptystring('nowhere::at_all')}]",
}
notify { 'fact':
  message => getvar_emptystring('osfamily'),
}
