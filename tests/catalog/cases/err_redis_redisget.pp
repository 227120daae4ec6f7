# redisget without a default fails when Redis cannot be reached.
$v = redisget('version', 'redis://127.0.0.1:1')
