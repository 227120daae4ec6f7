# stdlib's dos2unix wants a string.
notice(dos2unix(3))
