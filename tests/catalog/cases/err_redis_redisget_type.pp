# redisget checks its default's type first.
$v = redisget(['k'], 'redis://127.0.0.1:1', 5)
