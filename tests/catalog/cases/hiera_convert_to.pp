# lookup_options convert_to: the found value is converted with the named type (and arguments).
$secret = lookup('lo_conv_secret')
notify { 'secret': message => $secret =~ Sensitive }
notify { 'unwrapped': message => $secret.unwrap }
notify { 'num': message => lookup('lo_conv_num') + 1 }
notify { 'list': message => lookup('lo_conv_list') }
notify { 'ver': message => lookup('lo_conv_ver') > SemVer('1.0.0') }
class lo_conv (Integer $num = 0) {
  notify { 'param': message => $num }
}
include lo_conv
