#!/bin/sh
echo shown
