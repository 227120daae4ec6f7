# A relationship whose source is missing: Puppet says "for relationship on"
# the target (apache::mod::cgi's `Class['apache::mod::prefork'] -> Class['apache::mod::cgi']`).
class present {}
include present
Class['absent'] -> Class['present']
