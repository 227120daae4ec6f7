# stdlib's shuffle (issue 14): random order, so only what does not
# depend on it is shown.
notify { 'sorted': message => String(sort(shuffle([3, 1, 2, 5, 4]))) }
notify { 'string': message => String(sort(split(shuffle('hello'), ''))) }
notify { 'one': message => String(shuffle(['x'])) }
notify { 'empty': message => String(shuffle([])) }
notify { 'empty-string': message => "[${shuffle('')}]" }
