# stdlib's time (issue 14): the epoch seconds now, the same in any zone.
notify { 'now': message => String(time() > 1700000000) }
notify { 'zone': message => String(time('Europe/Paris') > 1700000000) }
notify { 'type': message => String(time('') =~ Integer) }
