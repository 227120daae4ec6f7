# to_yaml refuses a line_width below -1, as Psych does.
notify { 'x': message => to_yaml(['abc'], {line_width => -2}) }
