# stdlib's parsepson (old PSON) wants an object or array at the top.
notice(parsepson('"s"'))
