#!/bin/sh
echo "not json"
exit 4
