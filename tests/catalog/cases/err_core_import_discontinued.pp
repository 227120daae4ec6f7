# import is discontinued in Puppet 4+: calling it is an error.
import 'nodes/*.pp'
