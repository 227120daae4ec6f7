# glob with two patterns as separate arguments.
glob('/tmp', '/usr')
