#!/usr/bin/env ruby
# Chosen only where the target has the puppet-agent feature.
puts '{"implementation": "agent.rb"}'
