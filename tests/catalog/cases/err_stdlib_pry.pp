# stdlib's pry needs the pry gem, which Debian's Puppet does not have;
# ferry has no debugger and fails the same way.
notify { 'before': }
pry()
