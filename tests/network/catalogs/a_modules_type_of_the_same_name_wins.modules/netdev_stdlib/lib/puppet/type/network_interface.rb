# netdev_stdlib's network_interface, as the compiler needs to know it (with
# an attribute ferry's built-in type does not have).
Puppet::Type.newtype(:network_interface) do
  newparam(:name, namevar: true)
  newproperty(:description)
  newproperty(:enable)
  newproperty(:mtu)
  newproperty(:speed)
  newproperty(:duplex)
end
