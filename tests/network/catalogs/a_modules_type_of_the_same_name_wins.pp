# With NAME.modules (netdev_stdlib's network_interface, with its speed) on the
# modulepath, the module's type is the one compiled.
network_interface { 'eth2':
  speed => '10g',
}
