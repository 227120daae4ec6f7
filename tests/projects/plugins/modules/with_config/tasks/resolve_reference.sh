#!/bin/sh
echo "{\"value\": 1}"
