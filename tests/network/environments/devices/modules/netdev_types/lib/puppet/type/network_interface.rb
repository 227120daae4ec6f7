# netdev_stdlib's network_interface, as the compiler needs to know it.
Puppet::Type.newtype(:network_interface) do
  newparam(:name, namevar: true)
  newproperty(:description)
  newproperty(:enable)
  newproperty(:mtu)
end
