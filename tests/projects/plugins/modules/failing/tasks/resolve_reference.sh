#!/bin/sh
echo failing
exit 1
