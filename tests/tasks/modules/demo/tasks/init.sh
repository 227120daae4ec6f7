#!/bin/sh
echo '{"init": true}'
