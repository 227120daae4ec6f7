# A title that is not a string reaches the catalog through stdlib's
# ensure_resource and create_resources (apache::vhost's
# `ensure_resource('apache::listen', $port)` with an Integer port): no title
# tag, and the title becomes the `name` attribute.
define listener() {
  notify { "listening ${title}": }
}
ensure_resource('listener', 8042)
ensure_resource('listener', '8043')
create_resources('listener', { 8044 => {} })
