# A bang method on a temporary value returns nil when it changes nothing
# (collectd/curl_json.conf.erb: `@post.gsub(..).gsub!(..)`), the changed
# copy otherwise.
notify { 'bang':
  message => inline_template('<%= "abc".gsub("x", "y").gsub!("z", "w").inspect %> <%= "abc".dup.gsub!("b", "B").inspect %> <%= " a ".strip.strip!.inspect %> <%= [1, nil].compact!.inspect %> <%= [2, 1].sort!.inspect %> <%= [1, 2].sort!.inspect %>'),
}
