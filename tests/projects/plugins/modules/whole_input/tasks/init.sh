#!/bin/sh
printf "{\"value\": "
cat
printf "}\n"
