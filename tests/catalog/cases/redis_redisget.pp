# redis's redisget: with a default, a Redis that cannot be reached gives
# the default (reading real keys is tests/module_functions.rs's part).
notify { 'down': message => redisget('version', 'redis://127.0.0.1:1', 'fallback') }
notify { 'down undef default': message => redisget('version', 'redis://127.0.0.1:1/3', undef) }
