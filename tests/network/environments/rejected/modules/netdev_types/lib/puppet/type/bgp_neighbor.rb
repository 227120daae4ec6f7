# A BGP neighbor (after cisco_bgp_neighbor), as the compiler needs to know it.
Puppet::Type.newtype(:bgp_neighbor) do
  newparam(:neighbor, namevar: true)
  newproperty(:ensure)
  newproperty(:asn)
  newproperty(:remote_as)
  newproperty(:description)
  newproperty(:shutdown)
end
