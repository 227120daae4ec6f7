notice(*$args)
include foo, bar
require ::base
