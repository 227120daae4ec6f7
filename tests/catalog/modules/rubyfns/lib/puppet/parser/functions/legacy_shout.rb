# A function in Puppet's legacy (3.x) Ruby API, as many Debian modules still ship.
module Puppet::Parser::Functions
  newfunction(:legacy_shout, type: :rvalue) do |args|
    args[0].to_s.upcase
  end
end
