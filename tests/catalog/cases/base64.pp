# stdlib's base64: Ruby's encode64 (lines of 60 characters, each ending in
# a newline), strict and URL-safe encodings; the lenient decoder (skips
# what is not base64, a `=` where a group starts too), URL-safe decoding
# without padding, strict decoding.
$long = 'The quick brown fox jumps over the lazy dog, twice: the quick brown fox.'
$e = base64('encode', $long)
$s = base64('encode', $long, 'strict')
$u = base64('encode', '??>>', 'urlsafe')
$d = base64('decode', $e)
$d2 = base64('decode', 'YWJj=ZGVm')
$d3 = base64('decode', 'Pz8-Pg', 'urlsafe')
$d4 = base64('decode', 'YWI=', 'strict')
$d5 = base64('decode', "Y W\nJj!", 'default')
$d6 = base64('decode', 'YW=Jj')
notify { 'b64': message => "${e}|${s}|${u}|${d}|${d2}|${d3}|${d4}|${d5}|${d6}|${base64('encode', '')}" }
