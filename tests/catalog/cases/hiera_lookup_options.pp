class lo_cls (Hash $settings) {
  notify { 'lo_cls': message => $settings }
}
include lo_cls
notify { 'lo': message => [lookup('lo_hash'), lookup('lo_deep_x'), lookup('lo_hash', { 'merge' => 'first' })] }
