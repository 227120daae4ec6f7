#!/bin/sh
# An _error that is not an object with a msg.
echo '{"_error": "plain words"}'
