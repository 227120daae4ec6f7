# stdlib's parsepson wants a non-empty string.
notice(parsepson(''))
