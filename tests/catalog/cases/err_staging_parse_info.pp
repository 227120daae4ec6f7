# staging_parse refuses an unknown part; undef is Ruby's '' there.
$x = staging_parse('/tmp/x.zip', undef)
