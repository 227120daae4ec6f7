# Puppet's core floor reads strings with Ruby's Float().
notice(floor('2.5x'))
