#!/bin/sh
echo polo
