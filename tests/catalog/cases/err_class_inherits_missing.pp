class kid inherits nobody {}
include kid
