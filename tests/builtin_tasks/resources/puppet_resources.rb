# Describes resources with Puppet 7's own resource indirection, as Bolt's
# get_resources does on a target: each argument a type (every instance) or
# `Type[title]`. Prints {"resources": [...]} for the resources task's test
# to compare with. Puppet's settings go to a throwaway directory.
#
# Package providers that list language packages (pip, gem, ...) are left
# out: ferry describes the system package manager's packages only.
require 'json'
require 'tmpdir'
require 'puppet'

Dir.mktmpdir do |root|
  settings = Puppet::Settings::REQUIRED_APP_SETTINGS.flat_map do |s|
    ["--#{s}", File.join(root, s.to_s.chomp('dir'))]
  end
  Puppet.initialize_settings(settings)
  %i[pip pip3 pip2 pipx gem puppet_gem puppetserver_gem].each do |name|
    provider = Puppet::Type.type(:package).provider(name)
    provider&.define_singleton_method(:instances) { [] }
  end
  env = Puppet.lookup(:environments).get('production')
  found = ARGV.flat_map do |arg|
    if (m = /\A([^\[]+)\[([^\]]+)\]\z/.match(arg))
      Puppet::Resource.indirection.find("#{m[1]}/#{m[2]}", environment: env)
    else
      Puppet::Resource.indirection.search(arg, environment: env)
    end
  end
  puts JSON.generate('resources' => found.map(&:to_data_hash))
end
