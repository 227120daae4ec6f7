# getparam with a string that is no resource reference fails as Puppet's
# catalog lookup does.
$x = getparam('nothing', 'message')
