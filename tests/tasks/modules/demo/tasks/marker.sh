#!/bin/sh
# The cached copy of this file is tampered with by the test.
echo '{"ran": "original"}'
