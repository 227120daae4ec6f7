#!/bin/sh
# Returns a value with a _sensitive part.
echo '{"user": "someone", "_sensitive": {"password": "s3cret-value"}}'
