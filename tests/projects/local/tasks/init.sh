#!/bin/sh
. "$PT__installdir/helpers/files/marco.sh"
