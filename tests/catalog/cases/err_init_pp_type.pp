# Looking for a class loads its module's init.pp and evaluates the parameter
# types there (quagga's Stdlib::Ip_address).
include corpuslang::other
