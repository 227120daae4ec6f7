# stdlib's bool2str takes only a Boolean (swift::storage::policy).
notify { 'x': message => bool2str('x') }
