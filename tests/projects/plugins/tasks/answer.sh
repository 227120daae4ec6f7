#!/bin/sh
printf "{\"value\": {\"n\": %s}}\n" "$PT_n"
