#!/bin/sh
echo "{\"answer\": 42, \"secret\": \"not-shown-4711\"}"
