# The resource API's network_route, as the compiler needs to know it.
Puppet::Type.newtype(:network_route) do
  newparam(:prefix, namevar: true)
  newproperty(:ensure)
  newproperty(:default_route)
  newproperty(:gateway)
  newproperty(:interface)
  newproperty(:metric)
end
