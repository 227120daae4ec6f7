#!/bin/sh
# Prints its message parameter (Bolt's spec fixture task "sample" does the same).
echo "$PT_message"
