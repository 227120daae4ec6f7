#!/usr/bin/env ruby
puts '{"implementation": "agent.rb"}'
